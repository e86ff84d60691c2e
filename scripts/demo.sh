#!/usr/bin/env bash
# The quick-start job: find speech in a real recording with both VADs.
# Uses the Silero and MarbleNet weights and LibriSpeech clips from the data
# folder beside the checkout (or $AUDIOC_DATA) until audio.c ships a model
# of its own.
set -euo pipefail
audioc=${1:-build/audioc}
here=$(cd "$(dirname "$0")/.." && pwd)
data=${AUDIOC_DATA:-$here/../shared/data}
silero=$data/framework/models/silero_vad/silero_vad_16k.safetensors
marblenet=$data/framework/models/marblenet_vad
clip=$data/asr_validation/librispeech/librispeech_test_clean_6930-75918-0001.wav

if [ ! -f "$silero" ] || [ ! -f "$clip" ]; then
  cat >&2 <<MSG
audio.c does not bundle VAD weights yet, and none were found in
  $data
To run the demo, point AUDIOC_DATA at a folder holding
  framework/models/silero_vad/silero_vad_16k.safetensors
  asr_validation/librispeech/librispeech_test_clean_6930-75918-0001.wav
or run the engine on your own files:
  $audioc vad --model /path/to/silero_vad_16k.safetensors your_audio.wav
MSG
  exit 1
fi

echo "Speech in $(basename "$clip") (seconds), Silero VAD:"
"$audioc" vad --model "$silero" "$clip"
if [ -d "$marblenet" ]; then
  echo "The same with MarbleNet VAD:"
  "$audioc" vad --model "$marblenet" "$clip"
fi
