#!/usr/bin/env bash
# Run the benchmarks on throw-away services and record their results (bench/results/*.json, bench/README.md).
#   bench/run.sh               all benchmarks
#   bench/run.sh timeseries    one of: timeseries, forecast, cloudwatch, advisor, whatif, frontend, pages, replica
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
which=${1:-all}
svc=$(mktemp -d /tmp/headroom-bench.XXXXXX)
replica_stop() {
  if [ -f "$svc/replica/data/postmaster.pid" ]; then
    if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$HEADROOM_TEST_PG_BIN/pg_ctl" -D "$svc/replica/data" -m immediate stop >/dev/null 2>&1 || true
    else "$HEADROOM_TEST_PG_BIN/pg_ctl" -D "$svc/replica/data" -m immediate stop >/dev/null 2>&1 || true; fi
  fi
}
trap 'replica_stop; scripts/services.sh stop "$svc"; rm -rf "$svc"' EXIT
scripts/services.sh start "$svc"
# shellcheck disable=SC1091
source "$svc/env"
DATABASE_URL="$HEADROOM_TEST_DATABASE_URL" uv run --locked alembic upgrade head >/dev/null 2>&1
export HEADROOM_BENCH_DATABASE_URL="$HEADROOM_TEST_DATABASE_URL"
if [ "$which" = all ] || [ "$which" = timeseries ]; then
  uv run --locked python bench/timeseries_bench.py --days 30 --prometheus
fi
if { [ "$which" = all ] || [ "$which" = forecast ]; } && [ -f bench/forecast_backtest.py ]; then
  uv run --locked python bench/forecast_backtest.py
fi
if { [ "$which" = all ] || [ "$which" = cloudwatch ]; } && [ -f bench/cloudwatch_efficiency.py ]; then
  uv run --locked python bench/cloudwatch_efficiency.py
fi
if { [ "$which" = all ] || [ "$which" = advisor ]; } && [ -f bench/advisor_bench.py ]; then
  uv run --locked python bench/advisor_bench.py advisor load store
fi
if [ "$which" = all ] || [ "$which" = whatif ]; then
  uv run --locked python bench/whatif_bench.py
fi
if [ "$which" = all ] || [ "$which" = frontend ]; then
  # Builds the front end and starts its own `headroom up` (embedded PostgreSQL), stopped at the end.
  uv run --locked python bench/frontend_budget.py
fi
if [ "$which" = all ] || [ "$which" = pages ]; then
  # Builds the front end, starts its own `headroom up` with the demo fleet, drives headless Chromium
  # (bench/metrics_first_chart.md); stopped at the end.
  uv run --locked python bench/page_times.py
fi
if [ "$which" = all ] || [ "$which" = replica ]; then
  # A streaming replica of the services' PostgreSQL, made as docs/operations.md "Read replica" says.
  as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
  primary_port=$(sed -E 's|.*@127.0.0.1:([0-9]+)/.*|\1|' <<<"$HEADROOM_TEST_DATABASE_URL")
  replica_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  mkdir -p "$svc/replica"; [ "$(id -u)" = 0 ] && chown postgres:postgres "$svc/replica"
  as_pg "$HEADROOM_TEST_PG_BIN/pg_basebackup" -D "$svc/replica/data" -R -X stream -c fast -h 127.0.0.1 -p "$primary_port" -U postgres
  as_pg "$HEADROOM_TEST_PG_BIN/pg_ctl" -D "$svc/replica/data" -l "$svc/replica/postgres.log" -w -t 60 \
    -o "-p $replica_port -k $svc/replica -c listen_addresses=127.0.0.1 -c hot_standby=on -c max_connections=200" start >/dev/null
  uv run --locked python bench/replica_routing_bench.py --primary-url "$HEADROOM_TEST_DATABASE_URL" \
    --replica-url "${HEADROOM_TEST_DATABASE_URL/:$primary_port\//:$replica_port/}" --redis-url "$HEADROOM_TEST_REDIS_URL"
fi
