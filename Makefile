# EngagementEngine: small aggregate targets. `make help` lists them.
SWIFT ?= swift
SCENARIO ?= default
SEED ?=
ARGS ?=
# Extra flags of the release server build: the Dockerfile passes --static-swift-stdlib.
RELEASE_FLAGS ?=
SEED_FLAG := $(if $(SEED),--seed $(SEED),)
# Release builds of the engine and the simulator with cross-module optimization (Package.swift).
export ENGAGEMENT_OPTIMIZE ?= 1

.PHONY: help setup build test simulate smoke soak bench bench-apns engaged-release serve scale-test lint format generate generate-check clean

help:
	@echo "make help       this list"
	@echo "make setup      install what a fresh machine needs (SQLite headers, chromium, PostgreSQL), resolve packages"
	@echo "make build      debug build of every target"
	@echo "make test       the whole test suite (Swift Testing) on the testable release build, with a throwaway"
	@echo "                PostgreSQL on loopback (.pgtest/); swift test --filter NAME for one suite in debug"
	@echo "make simulate   release build, then the default scenario (SCENARIO=smoke SEED=42 ARGS='--users 500')"
	@echo "make smoke      release build, then the smoke scenario: about 200 users for a week (SEED=, ARGS= as simulate)"
	@echo "make soak       release build, then swarm testing: SEEDS=N seeds (20) of scenario swarm, each drawing"
	@echo "                its faults, personas, zones and preferences; SEED= and a command for each failure"
	@echo "                (exit 2 correctness, 3 liveness; USERS=150 WEEKS=2 FIRST_SEED=1)"
	@echo "make bench      release build: engine micro-benchmarks (content and policy timings, the population sweep),"
	@echo "                SQLite store figures, the smoke simulation's budgets"
	@echo "                (BENCH_STORE_USERS=10000 BENCH_STORE_WEEKS=8 for the full store benchmark)"
	@echo "make bench-apns release build: pushes/s from the APNs client to the fake APNs over one HTTP/2"
	@echo "                connection, and ES256 provider-token signing time (ARGS='--pushes 200000')"
	@echo "make engaged-release  release build of the engaged server (.build/release/engaged); CI and the"
	@echo "                Dockerfile build it so (RELEASE_FLAGS=--static-swift-stdlib in the image)"
	@echo "make serve      release build (make engaged-release), then the engaged server on 127.0.0.1:8080"
	@echo "                with its data in .engaged/"
	@echo "                (a development API key is generated and printed when ENGAGED_API_KEY is unset;"
	@echo "                 ARGS='--manual-clock 2027-03-01T06:00:00Z' for a clock moved by POST /v1/admin/clock)"
	@echo "make scale-test release build, a throwaway PostgreSQL under .scale/, USERS=100000 users, WORKERS=4"
	@echo "                engaged workers, one SIGKILLed mid-run; every alert sent exactly once? (.scale/scale-report.json)"
	@echo "make lint       sans-I/O greps over Modules/ and swift format lint"
	@echo "make format     swift format in place"
	@echo "make generate   the API's types, client and server routing from Modules/EngagedAPI/openapi.yaml"
	@echo "                (swift-openapi-generator); commit the result"
	@echo "make generate-check  fails when the committed generated code is not what openapi.yaml generates"
	@echo "make clean      remove what builds and runs leave: .build, .simulate, .scale, .pgtest"

setup:
	@command -v $(SWIFT) >/dev/null || { echo "swift is not on PATH: install Swift 6.2 or later"; exit 1; }
	@if ! [ -e /usr/include/sqlite3.h ] && command -v apt-get >/dev/null; then \
		echo "installing libsqlite3-dev"; \
		(apt-get update -qq && apt-get install -y -qq libsqlite3-dev) >/dev/null; \
	fi
	@if ! command -v chromium >/dev/null && command -v apt-get >/dev/null; then \
		echo "installing chromium (the report.html test renders the page headless)"; \
		(apt-get update -qq && apt-get install -y -qq chromium) >/dev/null; \
	fi
	@if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && command -v apt-get >/dev/null; then \
		echo "installing postgresql (the PostgreSQL store's tests and make scale-test start a throwaway server)"; \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql) >/dev/null; \
	fi
	$(SWIFT) package resolve

build:
	$(SWIFT) build

# The suite runs on the release build made testable (ENGAGEMENT_TESTABLE=1, Package.swift:
# `@testable import` works, exclusivity checks stay on): the simulation suites run whole scenarios
# optimized, and CI's simulations and benchmarks use the same build instead of compiling every
# dependency a second time in debug (the times are in docs/PERFORMANCE.md).
# `--disable-testable-imports` leaves testability to Package.swift, which gives it to this
# package's targets only: swift test's own switch would give it to every dependency, a build of
# its own. `swift test --filter NAME` is the quick debug loop for one suite.
# The PostgreSQL suites need a server: one is started on loopback for the run and stopped after.
# The tests run in three passes. The simulation suites run whole scenarios on the calling thread,
# and Swift Testing runs every test at once on a cooperative pool as wide as the machine: beside
# them, the servers' tests wait their turn long enough to pass their clients' read timeouts on a
# two-core machine. Both passes always run; the status is the first failure's.
SIMULATION_TESTS = ^(SimulationTests|SimulatorTests)\.
# The suites that flood the server with connections or run it under a low open-file limit run
# alone, after the server pass: beside it they would take the cores the other suites' clients
# wait on, and what they measure (a probe's latency during the flood) would measure the rest.
SOLO_TESTS = ^EngagedTests\.(SlowlorisTests|DescriptorTests)
test: export ENGAGEMENT_TESTABLE = 1
test:
	@url=$$(scripts/pg-local.sh start .pgtest) || { echo "PostgreSQL could not be started (scripts/pg-local.sh)"; exit 69; }; \
	ENGAGED_TEST_DATABASE_URL="$$url" $(SWIFT) test -c release --disable-testable-imports --skip '$(SIMULATION_TESTS)|$(SOLO_TESTS)'; status=$$?; \
	scripts/pg-local.sh stop .pgtest; \
	echo "== the connection-flood suites, alone"; \
	$(SWIFT) test -c release --disable-testable-imports --skip-build --filter '$(SOLO_TESTS)'; solo=$$?; \
	if [ $$status -eq 0 ]; then status=$$solo; fi; \
	echo "== the simulation suites"; \
	$(SWIFT) test -c release --disable-testable-imports --skip-build --filter '$(SIMULATION_TESTS)'; second=$$?; \
	if [ $$status -eq 0 ]; then status=$$second; fi; exit $$status

simulate:
	$(SWIFT) build -c release --product simulate
	./.build/release/simulate --scenario $(SCENARIO) $(SEED_FLAG) $(ARGS)

smoke:
	$(SWIFT) build -c release --product simulate
	./.build/release/simulate --scenario smoke $(SEED_FLAG) $(ARGS)

soak:
	$(SWIFT) build -c release --product simulate
	SEEDS=$(or $(SEEDS),20) bash scripts/soak.sh

# The products it runs, one by one: `swift build` without a product would also build every
# dependency's own example programs.
bench:
	$(SWIFT) build -c release --product bench
	$(SWIFT) build -c release --product store-crash-writer
	$(SWIFT) build -c release --product simulate
	./.build/release/bench
	rm -f .simulate/bench-store.sqlite* && mkdir -p .simulate
	./.build/release/store-crash-writer --bench .simulate/bench-store.sqlite --users $(or $(BENCH_STORE_USERS),1000) --weeks $(or $(BENCH_STORE_WEEKS),2)
	./.build/release/simulate --scenario smoke --no-events --out .simulate/bench-smoke

bench-apns:
	$(SWIFT) build -c release --product bench-apns
	./.build/release/bench-apns $(ARGS)

# The server's release build, one target for CI, `make serve`, `make scale-test` and the Dockerfile
# (scripts/check-container-files.sh checks the Dockerfile runs only targets CI runs).
engaged-release:
	$(SWIFT) build -c release --product engaged $(RELEASE_FLAGS)

scale-test: engaged-release
	$(SWIFT) build -c release --product scale-test
	@url=$$(scripts/pg-local.sh start .scale/pg) || exit 69; \
	./.build/release/scale-test --database "$$url" --engaged ./.build/release/engaged \
		--restart-command "scripts/pg-local.sh restart .scale/pg" --users $(or $(USERS),100000) --workers $(or $(WORKERS),4) $(ARGS); status=$$?; \
	scripts/pg-local.sh stop .scale/pg; exit $$status

# The server on the embedded default. Missing secrets are generated for development only and
# said so; a deployment sets ENGAGED_API_KEY and ENGAGED_USER_TOKEN_KEYS itself.
serve: engaged-release
	@mkdir -p .engaged
	@key="$${ENGAGED_API_KEY:-}"; tokenKeys="$${ENGAGED_USER_TOKEN_KEYS:-}"; \
	if [ -z "$$key" ]; then \
		key="dev-$$(od -An -tx1 -N24 /dev/urandom | tr -d ' \n')"; \
		echo "================================================================"; \
		echo " DEVELOPMENT API KEY (ENGAGED_API_KEY is unset; not for production)"; \
		echo "   export ENGAGED_API_KEY=$$key"; \
		echo "================================================================"; \
	fi; \
	if [ -z "$$tokenKeys" ]; then \
		tokenKeys="dev:$$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')"; \
		echo "DEVELOPMENT user-token key (ENGAGED_USER_TOKEN_KEYS is unset; not for production):"; \
		echo "   export ENGAGED_USER_TOKEN_KEYS=$$tokenKeys"; \
	fi; \
	ENGAGED_API_KEY="$$key" ENGAGED_USER_TOKEN_KEYS="$$tokenKeys" \
		exec ./.build/release/engaged serve --data-dir .engaged --port 8080 --host 127.0.0.1 $(ARGS)

# The engine's modules are sans-I/O (docs/ARCHITECTURE.md): no clock, no ambient randomness, no sleep.
lint:
	@bad=$$(grep -rnE '\bDate\(\)|\bUUID\(\)|\.random\(|randomElement\(|Calendar\.current|Task\.sleep|Date\.now' \
		--include='*.swift' Modules | grep -vE '^[^:]+:[0-9]+:\s*//'); \
	if [ -n "$$bad" ]; then echo "ambient time or randomness in Modules/:"; echo "$$bad"; exit 1; fi
	@bad=$$(grep -rnE 'Logger\(label:' --include='*.swift' Modules); \
	if [ -n "$$bad" ]; then echo "modules must receive a Logger, not create one:"; echo "$$bad"; exit 1; fi
	$(SWIFT) format lint --strict --recursive Package.swift Modules Simulation Apps Tests

# The generated API code is committed: a fresh clone builds it without compiling the generator.
generate:
	scripts/generate-api.sh

generate-check:
	scripts/generate-api.sh --check

format:
	$(SWIFT) format --in-place --recursive Package.swift Modules Simulation Apps Tests

clean:
	rm -rf .build .simulate .scale .pgtest
