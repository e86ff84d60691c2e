#!/usr/bin/env bash
# Installs every Debian package that building, testing, fuzzing and
# benchmarking audio.c need. Idempotent: packages already present are kept.
set -euo pipefail

packages=(
  # build
  build-essential cmake ninja-build pkg-config clang ccache
  # libraries (see DESIGN.md "Dependencies")
  libsndfile1-dev libvorbis-dev libogg-dev libsoxr-dev libkissfft-dev libopenblas-dev libcjson-dev
  libpcre2-dev libutf8proc-dev libmicrohttpd-dev zlib1g-dev
  # downloads of models from the Hugging Face Hub (src/hub/http.c)
  libcurl4-openssl-dev
  # FFmpeg's demuxers and decoders: M4A/MP4, WebM, AAC (src/audio/ffmpeg.c)
  libavformat-dev libavcodec-dev libavutil-dev
  # tests: independent PyTorch references, tokenizer and resampler oracles, speech to test with
  python3 python3-pytest python3-torch python3-numpy python3-scipy python3-torchaudio python3-sentencepiece espeak-ng sox
  # tests: the ffmpeg tool makes M4A, WebM and AAC files to decode
  ffmpeg
  # tests: Praat's pitch tracker, the F0 estimator Vevo2's upstream uses (compared in test_vevo2_pitch)
  praat
  # tests: Node.js for the npm clients and oracles below
  nodejs
  # tests: the web page in real browsers (driven by puppeteer-core, below)
  chromium firefox-esr
  # tests: several audioc-server instances behind a real load balancer (tests/server/test_balancer.py)
  nginx
  # fuzzing (libFuzzer) and sanitizer runtimes for clang
  libclang-rt-14-dev
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages already installed"
else
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends "${missing[@]}"
fi
# Debian's nodejs comes without npm; other builds of nodejs bring their own
if ! command -v npm >/dev/null; then
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends npm
fi

# npm: the official OpenAI SDK (a real client of audioc-server), the
# Hugging Face tokenizers library (the BPE oracle) and puppeteer-core (drives
# Chromium through the web page), at the versions of
# tests/node/package-lock.json, into tests/node/node_modules
cd "$(dirname "$0")/../tests/node"
if [ -d node_modules/openai ] && [ -d node_modules/@anush008/tokenizers ] && [ -d node_modules/puppeteer-core ]; then
  echo "setup: npm test clients already installed"
else
  echo "setup: installing the npm test clients (tests/node)"
  npm ci --no-audit --no-fund --loglevel=error
fi
