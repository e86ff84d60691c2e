# Convenience targets over CMake; see README.md.
BUILD ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
TSAN_BUILD ?= build-tsan
GENERATOR := $(shell command -v ninja >/dev/null 2>&1 && echo "-G Ninja")
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: all build demo test test-sanitize test-tsan test-slowest bench fuzz clean

all: build

build:
	@test -f $(BUILD)/CMakeCache.txt || cmake -S . -B $(BUILD) $(GENERATOR) -DCMAKE_BUILD_TYPE=Release
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	scripts/demo.sh $(BUILD)/audioc

test: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

# AddressSanitizer and UndefinedBehaviorSanitizer over what they are for:
# the C code's unit, parser (fuzz), CLI, server and library tests, which run
# every family end to end; the parity and model tests check numbers that
# the sanitizers do not change, and run in `make test`.
SANITIZE_LABELS ?= unit|fuzz|cli|server|hub|lib
test-sanitize:
	@test -f $(ASAN_BUILD)/CMakeCache.txt || cmake -S . -B $(ASAN_BUILD) $(GENERATOR) \
	    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DAUDIOC_SANITIZE=ON
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	ctest --test-dir $(ASAN_BUILD) --output-on-failure -j $(JOBS) -L '$(SANITIZE_LABELS)'

# The threaded parts (the API shared by threads, the server) under ThreadSanitizer:
# of the server files, the cases marked `threads` (tests/CMakeLists.txt, pytest.ini).
test-tsan:
	@test -f $(TSAN_BUILD)/CMakeCache.txt || cmake -S . -B $(TSAN_BUILD) $(GENERATOR) \
	    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DAUDIOC_TSAN=ON
	cmake --build $(TSAN_BUILD) -j $(JOBS)
	TSAN_OPTIONS="halt_on_error=1 suppressions=$(CURDIR)/tests/tsan.supp" \
	    ctest --test-dir $(TSAN_BUILD) --output-on-failure -j $(JOBS) -L threads

# The ten slowest tests of the last run in BUILD (from ctest's own record).
test-slowest:
	@test -f $(BUILD)/Testing/Temporary/CTestCostData.txt || { echo "no test run in $(BUILD) yet"; exit 1; }
	@awk 'NF == 3 { printf "%8.1f s  %s\n", $$3, $$1 }' $(BUILD)/Testing/Temporary/CTestCostData.txt | sort -rn | head -10

bench: build
	/usr/bin/python3 bench/vad_bench.py $(BUILD)/audioc
	/usr/bin/python3 bench/asr_bench.py --build $(BUILD)

# libFuzzer harnesses (clang); FUZZ_SECONDS per harness.
FUZZ_SECONDS ?= 60
fuzz:
	@test -f $(FUZZ_BUILD)/CMakeCache.txt || CC=clang cmake -S . -B $(FUZZ_BUILD) $(GENERATOR) \
	    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DAUDIOC_SANITIZE=ON -DAUDIOC_FUZZ=ON
	cmake --build $(FUZZ_BUILD) -j $(JOBS)
	tests/fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD) $(TSAN_BUILD)
