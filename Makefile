# FabricSim: `make run` and `make test` install what is missing, build, and run.
SHELL := /bin/bash
BUILD ?= build
BUILD_ASAN ?= build-asan
SCENARIO ?= platforms/scenarios/default.yaml
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?= -DFABRICSIM_WERROR=ON
APT_PACKAGES := cmake ninja-build g++ pkg-config libsystemc-dev catch2 libboost-dev \
                libyaml-cpp-dev nlohmann-json3-dev tshark python3 python3-venv
VENV := .venv
PY := $(VENV)/bin/python
export SYSTEMC_DISABLE_COPYRIGHT_MESSAGE := 1

.PHONY: all deps build run test test-cpp test-py test-asan bench clean

all: build

deps:
	@missing=""; for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  SUDO=""; [ "$$(id -u)" -eq 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing; \
	fi
	@if [ ! -x $(PY) ]; then python3 -m venv $(VENV); fi
	@$(PY) -c "import pytest" 2>/dev/null || $(PY) -m pip install -q -r requirements-dev.txt

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja $(CMAKE_FLAGS)

build: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

run: build
	$(BUILD)/platforms/fabricsim-sim $(SCENARIO) --out results/default

test: build
	$(MAKE) --no-print-directory test-cpp test-py

test-cpp:
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

test-py:
	FABRICSIM_SIM=$(abspath $(BUILD))/platforms/fabricsim-sim $(PY) -m pytest -q tests/python

# Unit tests once more under AddressSanitizer + UndefinedBehaviorSanitizer.
test-asan: deps
	cmake -S . -B $(BUILD_ASAN) -G Ninja $(CMAKE_FLAGS) -DFABRICSIM_SANITIZE="address;undefined" \
	      -DFABRICSIM_BUILD_BENCH=OFF -DCMAKE_BUILD_TYPE=Debug
	cmake --build $(BUILD_ASAN) -j $(JOBS)
	cd $(BUILD_ASAN) && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --output-on-failure -j $(JOBS)

bench: build
	$(PY) bench/run_bench.py --build $(BUILD)

clean:
	rm -rf $(BUILD) $(BUILD_ASAN)
