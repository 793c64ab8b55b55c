# One command per action. The README's two commands are `make up` and `make test`.
.PHONY: up test lint fmt typecheck e2e bench migrate gen-client services-up services-down

up:            ## run Headroom on http://127.0.0.1:8000 (embedded defaults)
	scripts/up.sh

test:          ## run every test suite against real PostgreSQL, Redis, Prometheus, moto and Chromium
	scripts/test.sh

lint:          ## ruff + import boundaries + front-end lint (incl. the feature boundaries)
	uv run ruff check backend worker migrations bench
	uv run lint-imports --no-logo
	cd frontend && npm run lint

fmt:
	uv run ruff format backend worker migrations bench
	uv run ruff check --fix backend worker migrations bench

typecheck:
	uv run mypy backend/headroom worker/headroom_worker
	cd frontend && npm run typecheck

e2e:           ## Playwright against HEADROOM_E2E_BASE_URL (default http://127.0.0.1:8000)
	scripts/e2e.sh

bench:
	bench/run.sh

migrate:
	uv run headroom migrate

gen-client:    ## regenerate frontend/openapi.json and the typed client from the API
	uv run headroom openapi --out frontend/openapi.json
	cd frontend && npm run gen-client
