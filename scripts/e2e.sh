#!/usr/bin/env bash
# Run the Playwright end-to-end tests in headless Chromium against a Headroom that is already serving
# (API and built front end on one origin). scripts/test.sh starts one on a test database and calls this.
#   HEADROOM_E2E_BASE_URL   where Headroom serves            (default http://127.0.0.1:8000)
#   HEADROOM_E2E_CHROMIUM   the Chromium binary to drive     (default /usr/bin/chromium, Debian's package)
#   HEADROOM_E2E_TIKV_STATUS_FILE  the TiKV status stand-ins' addresses (JSON), for tests/apply.spec.ts
# Extra arguments go to `playwright test` (e.g. a spec file or --grep).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo/e2e"

export HEADROOM_E2E_BASE_URL="${HEADROOM_E2E_BASE_URL:-http://127.0.0.1:8000}"
export HEADROOM_E2E_CHROMIUM="${HEADROOM_E2E_CHROMIUM:-/usr/bin/chromium}"
# Browsers come from the system, never from a download.
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1

if [ ! -x "$HEADROOM_E2E_CHROMIUM" ]; then
  echo "e2e: no Chromium at $HEADROOM_E2E_CHROMIUM (apt-get install chromium, or set HEADROOM_E2E_CHROMIUM)" >&2
  exit 1
fi

if [ -f package-lock.json ]; then
  if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    npm ci --no-audit --no-fund --loglevel=error </dev/null
  fi
else
  npm install --no-audit --no-fund --loglevel=error </dev/null
fi

# Playwright strips types without checking them; check the specs and page objects first (unless a run started beside
# this one checks them: HEADROOM_E2E_SKIP_TYPECHECK=1, as scripts/test.sh sets for its second run).
if [ "${HEADROOM_E2E_SKIP_TYPECHECK:-}" != 1 ]; then npx --no-install tsc --noEmit -p tsconfig.json; fi

if ! curl -sf -o /dev/null "$HEADROOM_E2E_BASE_URL/healthz"; then
  echo "e2e: nothing answers at $HEADROOM_E2E_BASE_URL/healthz; start Headroom first (make up)" >&2
  exit 1
fi

echo "e2e: $("$HEADROOM_E2E_CHROMIUM" --version 2>/dev/null || echo chromium) against $HEADROOM_E2E_BASE_URL"
# Without arguments both projects run, the specs that change the demo first and alone (project "demo-changes"), then
# the others on two workers ("shared", which depends on it). With arguments (a spec file, --grep, --project=...),
# only what they select runs, without the dependency's specs.
deps=()
if [ $# -gt 0 ]; then deps=(--no-deps); fi
exec npx --no-install playwright test ${deps[@]+"${deps[@]}"} "$@" </dev/null
