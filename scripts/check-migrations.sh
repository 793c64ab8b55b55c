#!/usr/bin/env bash
# Migration checks CI runs on an empty database: upgrade head, no drift (alembic check), exactly one head,
# downgrade to base and upgrade again. Usage: scripts/check-migrations.sh DATABASE_URL_OF_AN_EMPTY_DB
set -euo pipefail
url=${1:?usage: check-migrations.sh DATABASE_URL}
cd "$(dirname "$0")/.."
export DATABASE_URL="$url"
uv run --locked alembic upgrade head >/dev/null
uv run --locked alembic check
heads=$(uv run --locked alembic heads | grep -c '(head)' || true)
[ "$heads" = 1 ] || { echo "expected exactly one migration head, found $heads" >&2; exit 1; }
uv run --locked alembic downgrade base >/dev/null
uv run --locked alembic upgrade head >/dev/null
echo "migrations ok: upgrade, no drift, one head, downgrade and back"
