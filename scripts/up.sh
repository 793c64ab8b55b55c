#!/usr/bin/env bash
# Run Headroom: install what it needs, then serve the API and the front end on http://127.0.0.1:8000.
# Without DATABASE_URL an embedded PostgreSQL keeps its data in .headroom/; without REDIS_URL jobs run
# in-process. See README "Configuration" for every variable.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
scripts/bootstrap.sh
export PATH="$HOME/.local/bin:$PATH"
exec uv run --locked headroom up "$@"
