# FabricSim: `make run` and `make test` install what is missing, build, and run.
SHELL := /bin/bash
BUILD ?= build
BUILD_ASAN ?= build-asan
SCENARIO ?= platforms/scenarios/default.yaml
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?= -DFABRICSIM_WERROR=ON
APT_PACKAGES := cmake ninja-build g++ pkg-config libsystemc-dev catch2 libboost-dev locales \
                libyaml-cpp-dev nlohmann-json3-dev tshark python3 python3-venv python3-dev \
                clang-format clang-tidy valgrind gtkwave
VENV := .venv
PY := $(VENV)/bin/python
# The _fabricsim module is built in the same CMake tree, for the venv's Python; tests import the
# package from python/ and the extension from $(BUILD)/python/ (no second C++ build).
PY_CMAKE_FLAGS = -DFABRICSIM_BUILD_PYTHON=ON -DPython_EXECUTABLE=$(abspath $(PY))
PYPATH = $(CURDIR)/python:$(abspath $(BUILD))/python
export SYSTEMC_DISABLE_COPYRIGHT_MESSAGE := 1

.PHONY: all deps configure build run test test-cpp test-py test-wheel test-asan bench bench-py examples wheel clean validate \
        format format-check lint fuzz

all: build

deps:
	@missing=""; for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  SUDO=""; [ "$$(id -u)" -eq 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing; \
	fi
	@$(MAKE) --no-print-directory $(VENV)/.requirements.stamp

# Python packages (pybind11, scikit-build-core, numpy, pandas, matplotlib, tqdm, pyarrow, dask, pytest, pyvcd, pyyaml),
# installed again only when requirements-dev.txt changes.
$(VENV)/.requirements.stamp: requirements-dev.txt
	@if [ ! -x $(PY) ]; then python3 -m venv $(VENV); fi
	$(PY) -m pip install -q -r requirements-dev.txt
	@touch $@

# Configures once, and again if the tree was configured without the Python module.
configure: deps
	@if [ ! -f $(BUILD)/build.ninja ] || ! grep -q '^FABRICSIM_BUILD_PYTHON:BOOL=ON' $(BUILD)/CMakeCache.txt; then \
	  cmake -S . -B $(BUILD) -G Ninja $(CMAKE_FLAGS) $(PY_CMAKE_FLAGS); fi

build: configure
	cmake --build $(BUILD) -j $(JOBS)

run: build
	$(BUILD)/platforms/fabricsim-sim $(SCENARIO) --out results/default --overwrite

test: build
	$(MAKE) --no-print-directory format-check test-cpp test-py

# STYLE.md rule 13: every C++ file as .clang-format has it (`make format` rewrites them).
CXX_SOURCES = $(shell git ls-files '*.cpp' '*.h' 2>/dev/null)
format-check: deps
	@clang-format --dry-run -Werror $(CXX_SOURCES) && echo "clang-format: $(words $(CXX_SOURCES)) files formatted"

format: deps
	clang-format -i $(CXX_SOURCES)

# STYLE rules 12 and 18: clang-tidy (.clang-tidy, findings are errors) over the project's sources
# with the build's compile_commands.json (headers through its HeaderFilterRegex); exits non-zero
# on any finding. Needs only the configured tree (no build). In CI (.ci/run) after `make test`;
# about 3 minutes on 2 cores.
LINT_FILES = $(CURDIR)/(models|platforms|pybind|tests|bench)/.*\.cpp$$
lint: configure
	run-clang-tidy -quiet -p $(BUILD) -j $(JOBS) '$(LINT_FILES)'

test-cpp:
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

test-py:
	FABRICSIM_SIM=$(abspath $(BUILD))/platforms/fabricsim-sim PYTHONPATH=$(PYPATH) \
	  $(PY) -m pytest -q --durations=8 tests/python

# `pip install .` into a fresh venv, then the README tour from outside the checkout
# (tests/python/test_wheel.py; builds the wheel in build-wheel/: minutes the first time).
test-wheel: deps
	FABRICSIM_WHEEL_TEST=1 $(PY) -m pytest -q tests/python/test_wheel.py

# Unit tests once more under AddressSanitizer + UndefinedBehaviorSanitizer.
test-asan: deps
	cmake -S . -B $(BUILD_ASAN) -G Ninja $(CMAKE_FLAGS) -DFABRICSIM_SANITIZE="address;undefined" \
	      -DFABRICSIM_BUILD_BENCH=OFF -DFABRICSIM_BUILD_PYTHON=OFF -DCMAKE_BUILD_TYPE=Debug
	cmake --build $(BUILD_ASAN) -j $(JOBS)
	cd $(BUILD_ASAN) && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --output-on-failure -j $(JOBS)

bench: build
	$(PY) bench/run_bench.py --build $(BUILD)

# Fuzzing outside CI (issue 18; docs/design.md "Fuzzing"): the structure-aware scenario fuzzer
# (fabricsim.fuzz, `fabricsim-sim validate` on mutated shipped scenarios) for FUZZ_CASES cases,
# reproducers in fuzz/out/; then the atheris target fuzz/atheris_config.py (the in-process
# YAML -> config path) for FUZZ_TIME seconds, corpus fuzz/corpus/ (seeded from the shipped
# scenarios), findings in fuzz/artifacts/. atheris is installed into the venv here, on demand: it
# is not a CI dependency. Fails if either finds something.
FUZZ_CASES ?= 20000
FUZZ_SEED ?= 1
FUZZ_TIME ?= 600
fuzz: build
	@status=0; \
	FABRICSIM_SIM=$(abspath $(BUILD))/platforms/fabricsim-sim PYTHONPATH=$(PYPATH) \
	  $(PY) -m fabricsim.fuzz --cases $(FUZZ_CASES) --seed $(FUZZ_SEED) --out fuzz/out || status=1; \
	$(PY) -c 'import atheris' 2>/dev/null || $(PY) -m pip install -q atheris || true; \
	if $(PY) -c 'import atheris' 2>/dev/null; then \
	  mkdir -p fuzz/artifacts; \
	  PYTHONPATH=$(PYPATH) $(PY) fuzz/atheris_config.py fuzz/corpus -keep_seed=1 -max_total_time=$(FUZZ_TIME) -timeout=10 \
	    -rss_limit_mb=2048 -max_len=1048576 -print_final_stats=1 -artifact_prefix=fuzz/artifacts/ || status=1; \
	else \
	  echo "make fuzz: atheris is missing (pip install atheris failed); ran only the structure-aware fuzzer"; \
	fi; \
	exit $$status

# Per-run cost of the Python worker processes and the 2-worker sweep speed-up, as JSON.
bench-py: build
	PYTHONPATH=$(PYPATH) $(PY) bench/python_isolation.py

# The example sweeps of examples/ (PNGs and CSVs in examples/out/).
examples: build
	PYTHONPATH=$(PYPATH) $(PY) examples/incast_buffer_sweep.py
	PYTHONPATH=$(PYPATH) $(PY) examples/ecn_threshold_sweep.py
	PYTHONPATH=$(PYPATH) $(PY) examples/headroom_sweep.py

# The validation report: every oracle experiment against its seed, regenerating docs/validation/
# (README.md, PNGs, results.json; about 1.5 minutes on 2 cores). QUICK=1 runs the quick subset (the
# cheap experiments, one or two per family, ~10 s) into $(BUILD)/validation-quick/ and leaves the
# committed report alone.
validate: build
	PYTHONPATH=$(PYPATH) $(PY) -m fabricsim.validation $(if $(QUICK),--quick --out $(BUILD)/validation-quick,--out docs/validation)

# The wheel, built by scikit-build-core from the same CMake project (tests and bench off).
wheel: deps
	$(PY) -m pip wheel --no-deps -w dist .

clean:
	rm -rf $(BUILD) $(BUILD_ASAN) build-wheel dist
