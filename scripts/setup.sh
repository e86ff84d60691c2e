#!/usr/bin/env bash
# Installs every Debian package that building, testing, fuzzing and
# benchmarking audio.c need. Idempotent: packages already present are kept.
set -euo pipefail

packages=(
  # build
  build-essential cmake ninja-build pkg-config clang
  # libraries (see DESIGN.md "Dependencies")
  libsndfile1-dev libsoxr-dev libkissfft-dev libopenblas-dev libcjson-dev
  libpcre2-dev libutf8proc-dev libmicrohttpd-dev
  # tests: independent PyTorch references, tokenizer oracle, speech to test with
  python3 python3-torch python3-numpy python3-sentencepiece espeak-ng sox
  # fuzzing (libFuzzer) and sanitizer runtimes for clang
  libclang-rt-14-dev
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages already installed"
  exit 0
fi

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "setup: installing ${missing[*]}"
$SUDO apt-get update
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends "${missing[@]}"
