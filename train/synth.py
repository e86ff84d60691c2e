#!/usr/bin/python3
"""Synthesize Danish utterances with espeak-ng + sox -> 16 kHz mono 16-bit WAVs + manifest.jsonl.

usage: synth.py OUTDIR --split train|eval -n N [--seed S] [--jobs 2]

Each utterance: espeak-ng -v da+VARIANT with random speed / pitch / amplitude / word gap,
sox resamples to 16 kHz (HQ) and optionally adds mild reverb, numpy adds mild noise
(white or brown, SNR 15-40 dB) and a little random silence at both ends.
Held-out conditions for evaluation (never used in training):
- voices EVAL_VOICES (variants not in TRAIN_VOICES),
- speeds in EVAL_SPEED (a band inside the training range, so the test is about unseen
  values, not extrapolation), and
- sentences (text_da.sentences(split="eval"): held out by hash).
Every utterance is seeded by (seed, split, index), so the result is independent of --jobs.
"""
import argparse
import json
import os
import random
import subprocess
import sys
import time
import wave
from multiprocessing import Pool

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import text_da  # noqa: E402

SR = 16000
# espeak-ng variants (espeak-ng --voices=variant); the odd ones (whisper, croak, robots) are
# left out. "" = the plain Danish voice.
TRAIN_VOICES = ["", "m1", "m2", "m3", "m4", "m5", "m6", "f1", "f2", "f3", "f4", "klatt", "klatt2",
                "klatt3", "adam", "Alex", "Alicia", "Andrea", "benjamin", "david", "ed", "john",
                "linda", "max", "paul", "rob", "robert", "steph", "zac", "anika", "iven", "Michael",
                "norbert", "quincy", "shelby", "travis"]
EVAL_VOICES = ["m7", "m8", "f5", "klatt4", "Annie", "edward", "steph2", "victor"]
TRAIN_SPEED = [(120, 150), (165, 200)]   # words per minute
EVAL_SPEED = [(150, 165)]


def draw_condition(r, split):
    voices, speeds = (TRAIN_VOICES, TRAIN_SPEED) if split == "train" else (EVAL_VOICES, EVAL_SPEED)
    lo, hi = r.choice(speeds)
    return {"voice": r.choice(voices), "speed": r.randint(lo, hi - 1), "pitch": r.randint(25, 75),
            "amp": r.randint(60, 160), "gap": r.choice([0, 0, 0, 1, 2, 4]),
            "reverb": r.random() < 0.4, "rev_amt": r.randint(10, 50), "room": r.randint(10, 60),
            "noise": r.random() < 0.7, "snr": r.uniform(15, 40), "brown": r.random() < 0.3,
            "pad0": r.uniform(0.02, 0.3), "pad1": r.uniform(0.02, 0.3), "noise_seed": r.randrange(2**31)}


def render(text, c):
    """text + condition -> int16 array at 16 kHz."""
    voice = "da" + ("+" + c["voice"] if c["voice"] else "")
    es = subprocess.run(["espeak-ng", "-v", voice, "-s", str(c["speed"]), "-p", str(c["pitch"]),
                         "-a", str(c["amp"]), "-g", str(c["gap"]), "--stdout", text],
                        check=True, capture_output=True).stdout
    fx = ["reverb", str(c["rev_amt"]), "50", str(c["room"])] if c["reverb"] else []
    raw = subprocess.run(["sox", "-t", "wav", "-", "-t", "raw", "-e", "floating-point", "-b", "32",
                          "-c", "1", "-r", str(SR), "-", "rate", "-h"] + fx,
                         input=es, check=True, capture_output=True).stdout
    x = np.frombuffer(raw, dtype=np.float32).astype(np.float64)
    rng = np.random.default_rng(c["noise_seed"])
    x = np.concatenate([np.zeros(int(c["pad0"] * SR)), x, np.zeros(int(c["pad1"] * SR))])
    if c["noise"]:
        n = rng.standard_normal(len(x))
        if c["brown"]:
            n = np.cumsum(n)
            n -= np.convolve(n, np.ones(801) / 801, mode="same")  # remove drift -> brownish
        p_sig = np.mean(x ** 2) + 1e-12
        x = x + n * np.sqrt(p_sig / (np.mean(n ** 2) + 1e-12) / 10 ** (c["snr"] / 10))
    peak = np.max(np.abs(x)) + 1e-9
    if peak > 0.98:
        x *= 0.98 / peak
    return np.round(x * 32767).astype(np.int16)


def write_wav(path, pcm):
    with wave.open(path, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(SR)
        w.writeframes(pcm.tobytes())


def job(args):
    i, text, split, seed, outdir = args
    c = draw_condition(random.Random(f"{seed}-{split}-{i}"), split)
    pcm = render(text, c)
    rel = f"wav/{i // 1000:03d}/{split}_{i:06d}.wav"
    path = os.path.join(outdir, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    write_wav(path, pcm)
    c = {k: c[k] for k in ("voice", "speed", "pitch", "amp", "reverb", "noise")}
    return {"audio": rel, "text": text, "duration": round(len(pcm) / SR, 3), **c}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("--split", choices=["train", "eval"], required=True)
    ap.add_argument("-n", type=int, required=True)
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--vocab", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "vocabulary_da.txt"))
    a = ap.parse_args()
    os.makedirs(a.outdir, exist_ok=True)
    texts = text_da.sentences(a.split, a.n, a.seed, text_da.Vocab(a.vocab), unique=a.split == "eval")
    work = [(i, t, a.split, a.seed, a.outdir) for i, t in enumerate(texts)]
    t0 = time.time()
    with Pool(a.jobs) as pool:
        rows = list(pool.imap(job, work, chunksize=16))
    dt = time.time() - t0
    with open(os.path.join(a.outdir, "manifest.jsonl"), "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    hours = sum(r["duration"] for r in rows) / 3600
    print(f"synth {a.split}: {len(rows)} utterances, {hours:.2f} h audio in {dt:.1f} s "
          f"({len(rows) / dt:.1f} utt/s, {hours * 3600 / dt:.0f}x real time, {a.jobs} jobs)")


if __name__ == "__main__":
    main()
