# The two set-up commands are `make demo` and `make test`; the rest are for developers.
BUILD ?= build
ASAN_BUILD ?= build-asan
JOBS ?= $(shell nproc)
PREFIX ?= /usr/local
# ccache (installed by bootstrap) makes a warm rebuild take seconds; paths are hashed relative to
# the checkout so a fresh clone in another directory still hits the cache.
# Ninja (bootstrap installs it) schedules the two cores better than make's recursive Makefiles.
CMAKE_GENERATOR_FLAG = $(if $(shell command -v ninja),-G Ninja)
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=RelWithDebInfo $(if $(shell command -v ccache),-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
export CCACHE_BASEDIR ?= $(CURDIR)
export CCACHE_NOHASHDIR ?= 1
# The precompiled headers are only reused when ccache may ignore their timestamps.
export CCACHE_SLOPPINESS ?= pch_defines,time_macros,include_file_mtime,include_file_ctime
# The local cluster runs the released agent-sandbox controller when its source is next to the
# repo; AGENT_SANDBOX_SOURCE= (empty) selects the project's own controller.
AGENT_SANDBOX_SOURCE ?= $(wildcard $(abspath $(CURDIR)/../shared/upstream/agent-sandbox-v0.5.6))
export AGENT_SANDBOX_SOURCE

.PHONY: all build bootstrap test unit integration asan format demo install bench bench-check fuzz cluster-up cluster-down clean deb

all: build

bootstrap:
	@scripts/bootstrap

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) $(CMAKE_GENERATOR_FLAG) $(CMAKE_FLAGS)

build: $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

# Unit tests, a bounded fuzz smoke of what a hostile pod writes, then the integration suite
# against the local cluster (started and stopped here); the cluster builds beside the C++ build.
test: bootstrap
	scripts/test $(BUILD)

unit: build
	cd $(BUILD) && ctest --output-on-failure -j 2 -LE integration

asan: bootstrap
	cmake -S . -B $(ASAN_BUILD) $(CMAKE_GENERATOR_FLAG) -DCMAKE_BUILD_TYPE=Debug -DROSSOCTL_SANITIZE=ON $(if $(shell command -v ccache),-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j 2 -LE integration
	scripts/integration $(ASAN_BUILD)

format:
	scripts/format

demo: bootstrap build
	scripts/demo $(BUILD)

install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

deb: build
	cd $(BUILD) && cpack -G DEB

# QUICK=1: fewer runs and objects (a few minutes); BUILD_ROW=1 adds a clean build (minutes);
# ROWS=startup,set-env,...: only those rows; ROSSOCTL_CLUSTER_DIR: a cluster already running.
bench: bootstrap build
	bench/run $(BUILD) $(if $(filter 1,$(QUICK)),--quick) $(if $(filter 1,$(BUILD_ROW)),--build-row) \
	  $(if $(ROWS),--only $(ROWS))

# The request counts behind the bench's rows (unit tests, no cluster, no timing).
bench-check: build
	$(BUILD)/unit_tests '[requests]'

fuzz:
	scripts/fuzz

cluster-up:
	tests/cluster/local-cluster up

cluster-down:
	tests/cluster/local-cluster down

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)
