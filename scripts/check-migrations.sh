#!/usr/bin/env bash
# Migration checks CI runs on an empty database: upgrade head, no drift (alembic check), exactly one head,
# downgrade to base and upgrade again. Usage: scripts/check-migrations.sh DATABASE_URL_OF_AN_EMPTY_DB
set -euo pipefail
url=${1:?usage: check-migrations.sh DATABASE_URL}
cd "$(dirname "$0")/.."
export DATABASE_URL="$url"

quiet() { # run a command; show its output only when it fails
  local out
  if ! out=$("$@" 2>&1); then echo "$out" >&2; echo "failed: $*" >&2; return 1; fi
}

quiet uv run --locked alembic upgrade head
quiet uv run --locked alembic check
heads=$(uv run --locked alembic heads 2>/dev/null | grep -c '(head)' || true)
[ "$heads" = 1 ] || { echo "expected exactly one migration head, found $heads" >&2; exit 1; }
quiet uv run --locked alembic downgrade base
quiet uv run --locked alembic upgrade head
echo "migrations ok: upgrade on an empty database, no drift, one head, downgrade to base and back"
