#!/usr/bin/env bash
# Install what Headroom needs on a fresh Debian machine with Python 3.11 and Node 20.
#   scripts/bootstrap.sh            Python env (.venv via uv) and the built front end   (for `make up`)
#   scripts/bootstrap.sh --test     also the system packages the tests use (PostgreSQL, Redis, Prometheus,
#                                   Chromium) and the e2e dependencies                   (for `make test`)
#   scripts/bootstrap.sh --test python | front-end
#                                   one half: the system packages, .venv and the AWS CLI; or the front end's and the
#                                   e2e specs' packages and the bundle (scripts/test.sh type-checks the Python
#                                   between the two, beside the second)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
with_test=0
[ "${1:-}" = "--test" ] && with_test=1
part=${2:-all}
case "$part" in all | python | front-end) ;; *) echo "bootstrap.sh: unknown part '$part' (python, front-end)" >&2; exit 2 ;; esac

log() { printf '\033[1m==> %s\033[0m\n' "$*"; }

# --- system packages (tests only) ---
if [ "$with_test" = 1 ] && [ "$part" != front-end ]; then
  need=()
  compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || need+=(postgresql)
  command -v redis-server >/dev/null || need+=(redis-server)
  command -v prometheus >/dev/null || need+=(prometheus)
  command -v promtool >/dev/null || need+=(prometheus)
  command -v prometheus-alertmanager >/dev/null || need+=(prometheus-alertmanager)
  [ -x /usr/bin/chromium ] || need+=(chromium)
  command -v curl >/dev/null || need+=(curl)
  # nginx: the front end's nginx.conf is run by a test (backend/tests/api/test_security_headers.py)
  [ -x /usr/sbin/nginx ] || need+=(nginx)
  # Go 1.19+: the tests read TiUP topologies with gopkg.in/yaml.v2 and v3 (backend/tests/domain/tikvconf/goyaml)
  command -v go >/dev/null || [ -x /usr/local/go/bin/go ] || need+=(golang-go)
  if [ "${#need[@]}" -gt 0 ]; then
    if [ "$(id -u)" = 0 ]; then
      log "apt-get install ${need[*]}"
      export DEBIAN_FRONTEND=noninteractive
      apt-get update -qq
      apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
      # The Debian prometheus package starts a system service; the tests run their own.
      # So does Debian's nginx (on port 80); the test runs its own on a free port.
      (systemctl disable --now prometheus prometheus-node-exporter prometheus-alertmanager nginx 2>/dev/null || { service prometheus stop; service prometheus-alertmanager stop; service nginx stop; } 2>/dev/null) >/dev/null 2>&1 || true
    elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
      log "sudo apt-get install ${need[*]}"
      sudo DEBIAN_FRONTEND=noninteractive apt-get update -qq
      sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
    else
      echo "missing system packages: ${need[*]} (install them with apt-get as root)" >&2
      exit 1
    fi
  fi
fi

if [ "$part" != front-end ]; then
# --- Python: uv and the workspace environment in .venv ---
if ! command -v uv >/dev/null; then
  log "installing uv"
  if [ "$(id -u)" = 0 ]; then python3 -m pip install -q uv; else python3 -m pip install -q --user uv; fi
  export PATH="$HOME/.local/bin:$PATH"
fi
log "uv sync"
uv sync --locked --quiet

# --- the real AWS CLI (tests only): the exported AWS scripts are run by it against the moto server. Its own
# environment, as a user's CLI is: awscli pins its botocore, which must not move Headroom's boto3. ---
AWSCLI_VERSION=1.46.3
if [ "$with_test" = 1 ] && ! .tools/awscli/bin/aws --version 2>&1 | grep -q "aws-cli/$AWSCLI_VERSION "; then
  log "AWS CLI $AWSCLI_VERSION (.tools/awscli)"
  rm -rf .tools/awscli
  uv venv --quiet --python 3.11 .tools/awscli
  uv pip install --quiet --python .tools/awscli/bin/python "awscli==$AWSCLI_VERSION"
fi
fi
[ "$part" = python ] && exit 0

# --- front end ---
if [ ! -d frontend/node_modules ] || [ frontend/package-lock.json -nt frontend/node_modules/.package-lock.json ]; then
  log "npm ci (frontend)"
  (cd frontend && npm ci --no-audit --no-fund --loglevel=error)
fi
log "building the front end"
if [ "$with_test" = 1 ]; then
  # The bundle only: `npm run build` also runs `tsc -b`, a full type-check (tsc re-checks noEmit projects on every
  # build), and scripts/test.sh type-checks the same tsconfig projects again in its front-end step.
  (cd frontend && npx --no-install vite build >/dev/null)
else
  (cd frontend && npm run --silent build >/dev/null)
fi

if [ "$with_test" = 1 ] && [ -f e2e/package.json ]; then
  if [ ! -d e2e/node_modules ] || [ e2e/package-lock.json -nt e2e/node_modules/.package-lock.json ]; then
    log "npm ci (e2e)"
    (cd e2e && npm ci --no-audit --no-fund --loglevel=error)
  fi
fi
