#!/usr/bin/env bash
# Run the whole test suite: installs what it needs, starts PostgreSQL, Redis, Prometheus and the moto server
# on free 127.0.0.1 ports, checks the migrations, runs the backend and worker tests, the front-end unit tests
# and the Playwright e2e tests in headless Chromium, stops what it started, and exits non-zero on any failure.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
export PATH="$HOME/.local/bin:$PATH"
# Let Python keep the bytecode it compiles (__pycache__, ignored by git): with PYTHONDONTWRITEBYTECODE set in the
# calling environment every process (each pytest worker, every CLI, Celery worker and server a test starts)
# compiles its imports again, about 8 s of CPU each for the API's imports.
unset PYTHONDONTWRITEBYTECODE

scripts/bootstrap.sh --test python
# The type check of the Python (mypy --strict, one core for about 30 s) runs beside the front end's install and build,
# the services' start and the migrations check, which leave a core idle most of their time; its result is shown at
# its step below.
mypy_log=$(mktemp /tmp/headroom-mypy.XXXXXX)
uv run --locked mypy backend/headroom worker/headroom_worker >"$mypy_log" 2>&1 &
mypy_pid=$!
trap 'kill "$mypy_pid" 2>/dev/null; rm -f "$mypy_log"' EXIT
scripts/bootstrap.sh --test front-end

svc=$(mktemp -d /tmp/headroom-test.XXXXXX)
server_pid=""
changes_server_pid=""
ebs_server_pid=""
stand_in_pid=""
e2e_moto_pid=""
demo_changes_pid=""
demo_ebs_pid=""
frontend_pid=""
cleanup() {
  [ -n "$mypy_pid" ] && kill "$mypy_pid" 2>/dev/null || true
  rm -f "$mypy_log"
  [ -n "$frontend_pid" ] && kill "$frontend_pid" 2>/dev/null || true
  [ -n "$demo_changes_pid" ] && kill "$demo_changes_pid" 2>/dev/null || true
  [ -n "$demo_ebs_pid" ] && kill "$demo_ebs_pid" 2>/dev/null || true
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
  [ -n "$changes_server_pid" ] && kill "$changes_server_pid" 2>/dev/null || true
  [ -n "$ebs_server_pid" ] && kill "$ebs_server_pid" 2>/dev/null || true
  [ -n "$stand_in_pid" ] && kill "$stand_in_pid" 2>/dev/null || true
  [ -n "$e2e_moto_pid" ] && kill "$e2e_moto_pid" 2>/dev/null || true
  scripts/services.sh stop "$svc" || true
  rm -rf "$svc" 2>/dev/null || true
}
trap cleanup EXIT
scripts/services.sh start "$svc"
# shellcheck disable=SC1091
source "$svc/env"
export AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing AWS_DEFAULT_REGION=us-east-1

step() { printf '\n\033[1m==> %s\033[0m (%s)\n' "$*" "$(date -u +%T)"; }

step "migrations: upgrade on an empty database, no drift, one head, downgrade to base and back"
scripts/check-migrations.sh "$HEADROOM_TEST_DATABASE_URL"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# Three e2e servers, each on a database and data directory of its own, started now and waited for at their step: a
# server migrates its database and simulates the demo fleet in its first minutes (53 s to its first /healthz at a
# load of 10), which happens while the steps below run instead of before Playwright.
# - "changes" and "ebs" serve the specs that change the demo (Playwright project demo-changes): on "changes" the
#   TiKV apply spec (it points demo nodes at TiKV stand-ins) and cluster.spec.ts, on "ebs" the volume apply spec
#   (it gives the demo's volumes IDs in moto). Each apply spec turns apply on and off for its organisation, so the
#   two cannot share a demo; each has its own and they run at the same time, beside pytest: they spend most of
#   their 6 and 3 minutes waiting for the demo's next minute of data (one after the other they took 9.5 minutes,
#   longer than the rest of the run).
# - "shared" serves the other specs, which read the demo as it is. With a demo of their own they need not wait for
#   the apply specs to put it back, and run as soon as pytest is done (bench/ci_time.md, "Sixth pass").
# No REDIS_URL: a server runs its jobs in-process, so its demo fleet is simulated and advised in its first minutes
# and the specs find the demo cluster's findings (with Redis, no worker would run them).
e2e_port=""
if [ -x scripts/e2e.sh ]; then
  uv run --locked python - "$HEADROOM_TEST_PG_ADMIN_URL" <<'PY'
import sys
import sqlalchemy as sa
engine = sa.create_engine(sys.argv[1], isolation_level="AUTOCOMMIT")
with engine.connect() as c:
    c.execute(sa.text("CREATE DATABASE headroom_e2e"))
    c.execute(sa.text("CREATE DATABASE headroom_e2e_changes"))
    c.execute(sa.text("CREATE DATABASE headroom_e2e_ebs"))
PY
  # TiKV status port stand-ins (backend/tests/tikv_status_server.py: GET/POST /config as TiKV answers them) for
  # tests/apply.spec.ts, which points demo nodes at them and runs a plan end to end; their addresses are in
  # $svc/tikv-status.json once they answer.
  uv run --locked python backend/tests/tikv_status_server.py --nodes 3 --addresses-file "$svc/tikv-status.json" \
    >"$svc/tikv-status.log" 2>&1 &
  stand_in_pid=$!
  # A moto server of the e2e servers' own: tests/apply-ebs.spec.ts runs beside pytest (below), whose AWS tests
  # create and empty EC2 resources region by region on the suite's moto server.
  e2e_moto_port=$(free_port)
  .venv/bin/python scripts/moto_server.py -H 127.0.0.1 -p "$e2e_moto_port" >"$svc/e2e-moto.log" 2>&1 &
  e2e_moto_pid=$!
  e2e_aws_endpoint="http://127.0.0.1:$e2e_moto_port"
  # Each apply step is watched 20 s instead of the guards' 15 minutes, so a run ends within the spec's time; the
  # watch then goes on until the demo has written the minute after the step (the guards' first point after it:
  # docs/thresholds/apply-guards.md#late-data), about a minute, and the windows compared stay their own 15 minutes.
  # AWS is the e2e moto server (tests/apply-ebs.spec.ts modifies volumes there through the write role, with the
  # testing credentials exported above as Headroom's own); the demo fleet's simulation asks nothing of AWS.
  e2e_admin="${HEADROOM_TEST_PG_ADMIN_URL%/postgres}"
  # An e2e server: database, data directory, log, then extra VAR=value settings; its port and pid in
  # $started_port and $started_pid.
  start_e2e_server() {
    local database=$1 data=$2 log=$3
    shift 3
    started_port=$(free_port)
    env DATABASE_URL="$e2e_admin/$database" HEADROOM_DATA_DIR="$data" \
      HEADROOM_PUBLIC_URL="http://127.0.0.1:$started_port" HEADROOM_AWS_ENDPOINT_URL="$e2e_aws_endpoint" "$@" \
      uv run --locked headroom serve --port "$started_port" >"$log" 2>&1 &
    started_pid=$!
  }
  start_e2e_server headroom_e2e_changes "$svc/data-changes" "$svc/server-changes.log" HEADROOM_APPLY_WATCH_SECONDS=20
  changes_port=$started_port changes_server_pid=$started_pid
  start_e2e_server headroom_e2e_ebs "$svc/data-ebs" "$svc/server-ebs.log" HEADROOM_APPLY_WATCH_SECONDS=20
  ebs_port=$started_port ebs_server_pid=$started_pid
  start_e2e_server headroom_e2e "$svc/data" "$svc/server.log"
  e2e_port=$started_port server_pid=$started_pid
fi

# Wait for an e2e server (port, pid, log). A server migrates its database before it listens, which takes a while on
# a loaded machine: wait as long as it is alive (up to 300 s), and show its log if it dies or never answers.
wait_for_server() {
  local port=$1 pid=$2 log=$3 deadline=$((SECONDS + 300))
  until curl -sf "http://127.0.0.1:$port/healthz" >/dev/null; do
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "the e2e server exited before it answered /healthz:" >&2; cat "$log" >&2; return 1
    fi
    if [ "$SECONDS" -ge "$deadline" ]; then
      echo "the e2e server did not answer /healthz within 300 s:" >&2; cat "$log" >&2; return 1
    fi
    sleep 0.5
  done
}

# The TiKV status stand-ins (for the TiKV apply spec).
wait_for_stand_ins() {
  until [ -s "$svc/tikv-status.json" ]; do
    if ! kill -0 "$stand_in_pid" 2>/dev/null; then
      echo "the TiKV status stand-ins exited:" >&2; cat "$svc/tikv-status.log" >&2; return 1
    fi
    sleep 0.5
  done
}

# The e2e moto server (for the volume apply spec).
wait_for_e2e_moto() {
  until curl -sf "$e2e_aws_endpoint/moto-api/" >/dev/null; do
    if ! kill -0 "$e2e_moto_pid" 2>/dev/null; then
      echo "the e2e moto server exited:" >&2; cat "$svc/e2e-moto.log" >&2; return 1
    fi
    sleep 0.5
  done
}

run_e2e() { # server port, data directory, then playwright test arguments...
  local port=$1 data=$2
  shift 2
  HEADROOM_E2E_BASE_URL="http://127.0.0.1:$port" HEADROOM_E2E_DEMO_PASSWORD_FILE="$data/demo-password.txt" \
    HEADROOM_E2E_OUTBOX_DIR="$data/outbox" HEADROOM_E2E_TIKV_STATUS_FILE="$svc/tikv-status.json" \
    HEADROOM_E2E_AWS_ENDPOINT="$e2e_aws_endpoint" \
    scripts/e2e.sh "$@"
}

step "lint (ruff)"
uv run --locked ruff check backend worker migrations $( [ -d bench ] && echo bench )

step "import boundaries (import-linter: the contracts in pyproject.toml)"
uv run --locked lint-imports --no-logo

step "typecheck (mypy --strict on the package and the worker, run beside the steps since the installs)"
mypy_rc=0
wait "$mypy_pid" || mypy_rc=$?
mypy_pid=""
cat "$mypy_log"
if [ "$mypy_rc" -ne 0 ]; then exit 1; fi

if [ -n "$e2e_port" ]; then
  step "end-to-end, the specs that change the demo (Playwright project demo-changes, on two servers of their own), beside the steps below"
  # Their output is shown at the end-to-end step. The second run skips the e2e specs' type check the first makes.
  ( wait_for_server "$changes_port" "$changes_server_pid" "$svc/server-changes.log" && wait_for_stand_ins \
      && run_e2e "$changes_port" "$svc/data-changes" --project=demo-changes \
      --output=test-results/demo-changes tests/apply.spec.ts tests/cluster.spec.ts ) \
    >"$svc/e2e-demo-changes.log" 2>&1 </dev/null &
  demo_changes_pid=$!
  ( wait_for_server "$ebs_port" "$ebs_server_pid" "$svc/server-ebs.log" && wait_for_e2e_moto \
      && HEADROOM_E2E_SKIP_TYPECHECK=1 run_e2e "$ebs_port" "$svc/data-ebs" --project=demo-changes \
      --output=test-results/demo-changes-ebs tests/apply-ebs.spec.ts ) >"$svc/e2e-demo-ebs.log" 2>&1 </dev/null &
  demo_ebs_pid=$!
fi

step "backend and worker tests (pytest, one xdist worker per core and one more)"
# Each worker gets a copy of the migrated database and Redis databases of its own (backend/tests/xdist_workers.py);
# loadgroup keeps each test file on one worker (its module fixtures are built once) and the files sharing the
# moto account or the simulated Prometheus together. `-n auto` is one worker per core and one more, at most 16
# (xdist_workers.auto_workers: why, and the measurement). HEADROOM_TEST_WORKERS=0 runs in this process.
uv run --locked pytest -q -p no:cacheprovider -n "${HEADROOM_TEST_WORKERS:-auto}" --dist loadgroup

front_end() { (cd frontend && npm run --silent lint && npm run --silent typecheck && npm run --silent test); }

if [ -z "$e2e_port" ]; then
  step "front end: lint (incl. the feature boundaries), typecheck and unit tests"
  front_end
else
  # The front end's checks beside the end-to-end specs: each alone leaves a core idle part of the time (ESLint and
  # tsc use one core, the specs wait on the browser and the server), together they keep both busy
  # (bench/ci_time.md, "Sixth pass"). The vitest tests' timeout (vite.config.ts) allows for the load.
  step "front end: lint (incl. the feature boundaries), typecheck and unit tests, beside the end-to-end specs"
  front_end >"$svc/frontend.log" 2>&1 </dev/null &
  frontend_pid=$!

  step "end-to-end (Playwright, headless Chromium): the specs that read the demo, two at a time (project shared)"
  wait_for_server "$e2e_port" "$server_pid" "$svc/server.log"
  run_e2e "$e2e_port" "$svc/data" --project=shared --no-deps --output=test-results/shared \
    || { tail -50 "$svc/server.log"; exit 1; }

  step "end-to-end (Playwright, headless Chromium): the specs that change the demo, run beside the steps above"
  demo_changes_rc=0
  wait "$demo_changes_pid" || demo_changes_rc=$?
  demo_changes_pid=""
  demo_ebs_rc=0
  wait "$demo_ebs_pid" || demo_ebs_rc=$?
  demo_ebs_pid=""
  cat "$svc/e2e-demo-changes.log" "$svc/e2e-demo-ebs.log"
  if [ "$demo_changes_rc" -ne 0 ]; then tail -50 "$svc/server-changes.log"; fi
  if [ "$demo_ebs_rc" -ne 0 ]; then tail -50 "$svc/server-ebs.log"; fi
  if [ "$demo_changes_rc" -ne 0 ] || [ "$demo_ebs_rc" -ne 0 ]; then exit 1; fi

  step "front end: the result of its checks (run beside the end-to-end specs)"
  frontend_rc=0
  wait "$frontend_pid" || frontend_rc=$?
  frontend_pid=""
  cat "$svc/frontend.log"
  if [ "$frontend_rc" -ne 0 ]; then exit 1; fi
fi

step "all suites passed"
