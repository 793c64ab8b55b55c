#!/usr/bin/env bash
# Start or stop the throw-away services the test suite needs, on free 127.0.0.1 ports:
#   PostgreSQL (initdb through `runuser -u postgres` when root: initdb refuses root), Redis, the moto server
#   (standing in for EC2/STS/CloudWatch) and, when installed, Prometheus.
# Usage: scripts/services.sh start DIR   -> writes DIR/env (source it)      scripts/services.sh stop DIR
set -euo pipefail

cmd=${1:?usage: services.sh start|stop DIR}
dir=${2:?usage: services.sh start|stop DIR}
repo=$(cd "$(dirname "$0")/.." && pwd)

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

pg_bin() {
  local d
  for d in /usr/lib/postgresql/*/bin; do [ -x "$d/initdb" ] && { echo "$d"; return; }; done
  command -v initdb >/dev/null && { dirname "$(command -v initdb)"; return; }
  echo "PostgreSQL server binaries not found (apt-get install postgresql)" >&2; exit 1
}

as_pg() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

wait_for() { # name, command...
  local name=$1; shift
  for _ in $(seq 1 100); do "$@" >/dev/null 2>&1 && return 0; sleep 0.2; done
  echo "$name did not come up" >&2; return 1
}

start() {
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  local bin pg_port redis_port moto_port prom_port
  bin=$(pg_bin)
  pg_port=$(free_port); redis_port=$(free_port); moto_port=$(free_port)

  mkdir -p "$dir/pg" "$dir/run"
  if [ "$(id -u)" = 0 ]; then chown -R postgres:postgres "$dir/pg" "$dir/run"; chmod 755 "$dir"; fi
  as_pg "$bin/initdb" -D "$dir/pg/data" -U postgres -A trust -E UTF8 --no-locale >"$dir/initdb.log" 2>&1
  as_pg "$bin/pg_ctl" -D "$dir/pg/data" -l "$dir/pg/postgres.log" -w -t 60 \
    -o "-p $pg_port -k $dir/run -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" start >/dev/null
  as_pg "$bin/psql" -h 127.0.0.1 -p "$pg_port" -U postgres -qc "CREATE DATABASE headroom_test" >/dev/null

  # 256 databases: each pytest-xdist worker takes 16 of its own (backend/tests/xdist_workers.py; the `databases`
  # directive, https://redis.io/docs/latest/operate/oss_and_stack/management/config-file/).
  redis-server --port "$redis_port" --bind 127.0.0.1 --save "" --appendonly no --databases 256 --daemonize yes \
    --pidfile "$dir/redis.pid" --logfile "$dir/redis.log" --dir "$dir"
  wait_for redis redis-cli -p "$redis_port" ping

  # moto through scripts/moto_server.py (DescribeInstanceTypes answered in pages, as EC2 does). `;` not `&&`: the
  # `&` must put moto itself in the background, so $! is moto's pid (not a subshell's).
  (cd "$dir"; nohup "$repo/.venv/bin/python" "$repo/scripts/moto_server.py" -H 127.0.0.1 -p "$moto_port" >"$dir/moto.log" 2>&1 & echo $! >"$dir/moto.pid")
  wait_for moto curl -sf "http://127.0.0.1:$moto_port/moto-api/"

  {
    echo "export HEADROOM_TEST_DATABASE_URL=postgresql+psycopg://postgres@127.0.0.1:$pg_port/headroom_test"
    echo "export HEADROOM_TEST_PG_ADMIN_URL=postgresql+psycopg://postgres@127.0.0.1:$pg_port/postgres"
    echo "export HEADROOM_TEST_REDIS_URL=redis://127.0.0.1:$redis_port/0"
    echo "export HEADROOM_TEST_AWS_ENDPOINT=http://127.0.0.1:$moto_port"
    echo "export HEADROOM_TEST_PG_BIN=$bin"
  } >"$dir/env"

  if command -v prometheus >/dev/null; then
    prom_port=$(free_port)
    mkdir -p "$dir/prom"
    printf 'global:\n  scrape_interval: 15s\nscrape_configs: []\n' >"$dir/prom/prometheus.yml"
    nohup prometheus --config.file="$dir/prom/prometheus.yml" --storage.tsdb.path="$dir/prom/data" \
      --web.listen-address="127.0.0.1:$prom_port" --web.enable-admin-api >"$dir/prom/prometheus.log" 2>&1 &
    echo $! >"$dir/prom.pid"
    wait_for prometheus curl -sf "http://127.0.0.1:$prom_port/-/ready"
    echo "export HEADROOM_TEST_PROMETHEUS_URL=http://127.0.0.1:$prom_port" >>"$dir/env"
  fi
  echo "services up: postgres :$pg_port, redis :$redis_port, moto :$moto_port${prom_port:+, prometheus :$prom_port}"
}

stop() {
  [ -d "$dir" ] || return 0
  local bin
  bin=$(pg_bin)
  if [ -f "$dir/pg/data/postmaster.pid" ]; then as_pg "$bin/pg_ctl" -D "$dir/pg/data" -m immediate stop >/dev/null 2>&1 || true; fi
  for f in redis moto prom; do
    if [ -f "$dir/$f.pid" ]; then kill "$(cat "$dir/$f.pid")" 2>/dev/null || true; fi
  done
}

case "$cmd" in
  start) start ;;
  stop) stop ;;
  *) echo "usage: services.sh start|stop DIR" >&2; exit 2 ;;
esac
