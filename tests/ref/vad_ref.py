#!/usr/bin/python3
"""Run the Silero / MarbleNet VAD references on a 16 kHz mono WAV, write JSON.

usage: vad_ref.py --family silero_vad|marblenet_vad --weights FILE [--config FILE]
                  --audio FILE.wav --out OUT.json [--threshold T] [silero options]
"""
import argparse
import json
import os
import struct
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "silero_vad"), os.path.join(HERE, "marblenet_vad")]
from marblenet_vad_ref import marblenet_probs, marblenet_segments  # noqa: E402
from silero_vad_ref import silero_probs, silero_segments  # noqa: E402

PCM, FLOAT, EXTENSIBLE = 1, 3, 0xFFFE


def read_wav(path):
    """Minimal RIFF/WAVE reader: 16-bit PCM or 32-bit float -> (rate, channels, float32 [n, ch])."""
    with open(path, "rb") as f:
        blob = f.read()
    if len(blob) < 12 or blob[:4] != b"RIFF" or blob[8:12] != b"WAVE":
        raise ValueError(f"{path}: not a RIFF/WAVE file")
    fmt = data = None
    pos = 12
    while pos + 8 <= len(blob):
        cid, size = blob[pos:pos + 4], struct.unpack("<I", blob[pos + 4:pos + 8])[0]
        body = blob[pos + 8:pos + 8 + size]
        if cid == b"fmt ":
            fmt = body
        elif cid == b"data":
            data = body
        pos += 8 + size + (size & 1)  # chunks are word aligned
    if fmt is None or data is None or len(fmt) < 16:
        raise ValueError(f"{path}: missing or short 'fmt ' / 'data' chunk")
    tag, channels, rate, _, block_align, bits = struct.unpack("<HHIIHH", fmt[:16])
    if tag == EXTENSIBLE:
        if len(fmt) < 40:
            raise ValueError(f"{path}: short WAVE_FORMAT_EXTENSIBLE header")
        tag = struct.unpack("<H", fmt[24:26])[0]  # first two bytes of the SubFormat GUID
    if channels < 1 or block_align != channels * bits // 8:
        raise ValueError(f"{path}: inconsistent fmt chunk")
    n = len(data) // block_align
    if tag == PCM and bits == 16:
        x = np.frombuffer(data, dtype="<i2", count=n * channels).astype(np.float32) / 32768.0
    elif tag == FLOAT and bits == 32:
        x = np.frombuffer(data, dtype="<f4", count=n * channels).astype(np.float32)
    else:
        raise ValueError(f"{path}: unsupported format tag {tag} with {bits} bits")
    return rate, channels, x.reshape(n, channels)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--family", required=True, choices=["silero_vad", "marblenet_vad"])
    ap.add_argument("--weights", required=True)
    ap.add_argument("--config", help="MarbleNet sidecar config json")
    ap.add_argument("--audio", required=True, help="16 kHz mono WAV (16-bit PCM or 32-bit float)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--threshold", type=float, default=0.5)
    ap.add_argument("--neg-threshold", type=float, default=-1)
    ap.add_argument("--min-speech-ms", type=int, default=250)
    ap.add_argument("--min-silence-ms", type=int, default=100)
    ap.add_argument("--speech-pad-ms", type=int, default=30)
    ap.add_argument("--max-speech-s", type=float, default=1e9)
    ap.add_argument("--min-silence-at-max-speech-ms", type=int, default=98)
    ap.add_argument("--use-max-poss-sil-at-max-speech", type=int, choices=[0, 1], default=1)
    a = ap.parse_args()

    try:
        rate, channels, x = read_wav(a.audio)
    except (OSError, ValueError) as e:
        sys.exit(f"vad_ref: {e}")
    if rate != 16000 or channels != 1:
        sys.exit(f"vad_ref: {a.audio}: need 16000 Hz mono, got {rate} Hz, {channels} channels")
    audio = x[:, 0]
    n = len(audio)

    if a.family == "silero_vad":
        probs = silero_probs(a.weights, audio)
        segs = silero_segments(
            probs, n, a.threshold, a.neg_threshold, a.min_speech_ms, a.min_silence_ms,
            a.speech_pad_ms, a.max_speech_s, a.min_silence_at_max_speech_ms,
            bool(a.use_max_poss_sil_at_max_speech))
    else:
        if not a.config:
            sys.exit("vad_ref: marblenet_vad needs --config")
        probs = marblenet_probs(a.weights, a.config, audio)
        segs = marblenet_segments(probs, n, a.threshold)

    out = {"family": a.family, "n_samples": n,
           "probs": [float(p) for p in probs], "segments": [list(s) for s in segs]}
    with open(a.out, "w") as f:
        json.dump(out, f)
        f.write("\n")


if __name__ == "__main__":
    main()
