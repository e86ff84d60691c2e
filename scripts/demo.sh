#!/usr/bin/env bash
# The quick-start job: transcribe the bundled Danish sample clips with the
# bundled model (models/hviske-tiny-da), then find speech in a real
# recording with both VADs when their weights are in the data folder beside
# the checkout (or $AUDIOC_DATA).
set -euo pipefail
audioc=${1:-build/audioc}
here=$(cd "$(dirname "$0")/.." && pwd)
data=${AUDIOC_DATA:-$here/../shared/data}
silero=$data/framework/models/silero_vad/silero_vad_16k.safetensors
marblenet=$data/framework/models/marblenet_vad
clip=$data/asr_validation/librispeech/librispeech_test_clean_6930-75918-0001.wav

echo "Transcripts of samples/*.flac (bundled model; what is said: samples/README.md):"
for f in "$here"/samples/*.flac; do
  printf '%s\t%s\n' "$(basename "$f")" "$("$audioc" transcribe --no-progress "$f")"
done

if [ ! -f "$silero" ] || [ ! -f "$clip" ]; then
  cat >&2 <<MSG
The VAD part of the demo needs weights that audio.c does not bundle, and none
were found in
  $data
Point AUDIOC_DATA at a folder holding
  framework/models/silero_vad/silero_vad_16k.safetensors
  asr_validation/librispeech/librispeech_test_clean_6930-75918-0001.wav
or run the engine on your own files:
  $audioc vad --model /path/to/silero_vad_16k.safetensors your_audio.wav
MSG
  exit 0
fi

echo "Speech in $(basename "$clip") (seconds), Silero VAD:"
"$audioc" vad --model "$silero" "$clip"
if [ -d "$marblenet" ]; then
  echo "The same with MarbleNet VAD:"
  "$audioc" vad --model "$marblenet" "$clip"
fi
