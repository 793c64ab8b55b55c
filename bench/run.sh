#!/usr/bin/env bash
# Run the benchmarks on throw-away services and record their results (bench/results/*.json, bench/README.md).
#   bench/run.sh               all benchmarks
#   bench/run.sh timeseries    one of: timeseries, forecast, cloudwatch, advisor, whatif, frontend
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
which=${1:-all}
svc=$(mktemp -d /tmp/headroom-bench.XXXXXX)
trap 'scripts/services.sh stop "$svc"; rm -rf "$svc"' EXIT
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
