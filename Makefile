# Convenience targets over CMake; see README.md.
BUILD ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
GENERATOR := $(shell command -v ninja >/dev/null 2>&1 && echo "-G Ninja")
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: all build demo test test-sanitize bench fuzz clean

all: build

build:
	@test -f $(BUILD)/CMakeCache.txt || cmake -S . -B $(BUILD) $(GENERATOR) -DCMAKE_BUILD_TYPE=Release
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	scripts/demo.sh $(BUILD)/audioc

test: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

# The same suite built with AddressSanitizer and UndefinedBehaviorSanitizer.
test-sanitize:
	@test -f $(ASAN_BUILD)/CMakeCache.txt || cmake -S . -B $(ASAN_BUILD) $(GENERATOR) \
	    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DAUDIOC_SANITIZE=ON
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	ctest --test-dir $(ASAN_BUILD) --output-on-failure -j $(JOBS)

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
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD)
