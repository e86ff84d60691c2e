#!/usr/bin/env bash
# Runs every libFuzzer harness of a fuzz build (make fuzz) for SECONDS each,
# starting from the committed seeds; new corpus entries go under the build.
set -euo pipefail
build=${1:?usage: run.sh BUILD_DIR [SECONDS]}
seconds=${2:-60}
here=$(cd "$(dirname "$0")" && pwd)
for fuzzer in "$build"/tests/fuzz/fuzz_*; do
  name=$(basename "$fuzzer")
  case $name in *_smoke) continue ;; esac
  corpus=$build/fuzz-corpus/${name#fuzz_}
  mkdir -p "$corpus"
  echo "== $name for ${seconds}s"
  "$fuzzer" -max_total_time="$seconds" "$corpus" "$here/seeds/${name#fuzz_}"
done
