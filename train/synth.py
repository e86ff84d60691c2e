#!/usr/bin/python3
"""Synthesize Danish utterances with espeak-ng + sox -> 16 kHz mono 16-bit WAVs + manifest.jsonl.

usage: synth.py OUTDIR --split train|eval|gen -n N [--seed S] [--jobs 2]

Each utterance: espeak-ng -v da+VARIANT with random speed / pitch / amplitude / word gap,
sox resamples to 16 kHz (HQ) and optionally adds mild reverb, numpy adds mild noise
(white or brown, SNR 15-40 dB) and a little random silence at both ends.
Training utterances are augmented on top of that (draw_augmentation): sox tempo 0.9-1.1 and
pitch +-300 cents, wider reverb (or none), silence of up to 1.5 s at either end, noise that is
white, pink, brown, babble (other espeak-ng speech) or 50 Hz hum (or none), peak level
-30..0 dBFS without clipping.
Held-out conditions for evaluation (never used in training):
- voices EVAL_VOICES (variants not in TRAIN_VOICES),
- speeds in EVAL_SPEED (a band inside the training range, so the test is about unseen
  values, not extrapolation), and
- sentences: "eval" = text_da.sentences(split="eval") (held out by hash, the training
  templates); "gen" = heldout_da.items (unseen phrasings by category; -n clips per category,
  the reported utterances with their own voice and speed, single number words with up to
  1.5 s of silence around them, the "short" words with almost none).
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
import heldout_da  # noqa: E402
import espeak_words  # noqa: E402
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
VOCAB = text_da.Vocab(heldout_da.VOCAB)


NOISES = ["none", "white", "pink", "brown", "babble", "hum"]
NOISE_P = [0.15, 0.2, 0.2, 0.15, 0.15, 0.15]


def draw_condition(r, split):
    voices, speeds = (TRAIN_VOICES, TRAIN_SPEED) if split == "train" else (EVAL_VOICES, EVAL_SPEED)
    lo, hi = r.choice(speeds)
    return {"voice": r.choice(voices), "speed": r.randint(lo, hi - 1), "pitch": r.randint(25, 75),
            "amp": r.randint(60, 160), "gap": r.choice([0, 0, 0, 1, 2, 4]),
            "reverb": r.random() < 0.4, "rev_amt": r.randint(10, 50), "room": r.randint(10, 60),
            "noise": r.random() < 0.7, "snr": r.uniform(15, 40), "brown": r.random() < 0.3,
            "pad0": r.uniform(0.02, 0.3), "pad1": r.uniform(0.02, 0.3), "noise_seed": r.randrange(2**31)}


def draw_augmentation(r, c):
    """Training only: replaces the mild reverb / noise / padding of c with wider ranges."""
    pad = lambda: r.uniform(0.3, 1.5) if r.random() < 0.2 else r.uniform(0.02, 0.3)  # noqa: E731
    c.update(tempo=r.uniform(0.9, 1.1) if r.random() < 0.6 else None,
             cents=r.randint(-300, 300) if r.random() < 0.5 else None,
             reverb=r.random() < 0.5, rev_amt=r.randint(0, 100), room=r.randint(5, 100),
             hf=r.randint(0, 100), predelay=r.randint(0, 40),
             noise=r.choices(NOISES, NOISE_P)[0], pad0=pad(), pad1=pad(),
             snr=r.uniform(15, 35) if r.random() < 0.5 else r.uniform(5, 40),
             peak_db=r.uniform(-1, -0.1) if r.random() < 0.1 else r.uniform(-30, -1),
             babble=[(r.choice(TRAIN_VOICES), r.randint(120, 199), babble_text(r)) for _ in range(3)])
    return c


def babble_text(r):
    while True:
        t = text_da.gen_everyday(r, VOCAB)
        if not text_da.never_trained(t):
            return t


def espeak(text, voice, speed, pitch=50, amp=100, gap=0, fx=()):
    """espeak-ng -> float64 array at 16 kHz, through sox (HQ resampling, then fx)."""
    voice = "da" + ("+" + voice if voice else "")
    es = subprocess.run(["espeak-ng", "-v", voice, "-s", str(speed), "-p", str(pitch),
                         "-a", str(amp), "-g", str(gap), "--stdout", text],
                        check=True, capture_output=True).stdout
    raw = subprocess.run(["sox", "-t", "wav", "-", "-t", "raw", "-e", "floating-point", "-b", "32",
                          "-c", "1", "-r", str(SR), "-", "rate", "-h"] + list(fx),
                         input=es, check=True, capture_output=True).stdout
    return np.frombuffer(raw, dtype=np.float32).astype(np.float64)


def make_noise(kind, n, rng, c):
    if kind in ("white", "brown"):
        x = rng.standard_normal(n)
        if kind == "brown":
            x = np.cumsum(x)
            x -= np.convolve(x, np.ones(801) / 801, mode="same")  # remove drift -> brownish
        return x
    if kind == "pink":  # 1/f power: shape white noise in the frequency domain
        f = np.fft.rfft(rng.standard_normal(n))
        return np.fft.irfft(f / np.sqrt(np.maximum(np.arange(len(f)), 1)), n)
    if kind == "hum":  # mains hum, 50 Hz and a few harmonics
        t = np.arange(n) / SR
        return sum(a * np.sin(2 * np.pi * 50 * k * t + rng.uniform(0, 6.3)) for k, a in ((1, 1), (2, .5), (3, .3), (5, .1)))
    # babble: other voices saying other sentences, looped to the length
    x = np.zeros(n)
    for voice, speed, text in c["babble"]:
        b = espeak(text, voice, speed)
        b = np.tile(b, n // max(1, len(b)) + 1)
        start = rng.integers(0, len(b) - n + 1)
        x += b[start:start + n] / (np.sqrt(np.mean(b ** 2)) + 1e-9)
    return x


def render(text, c):
    """text + condition -> int16 array at 16 kHz."""
    fx = ["pitch", str(c["cents"])] if c.get("cents") else []
    fx += ["tempo", "-s", f"{c['tempo']:.3f}"] if c.get("tempo") else []
    if c["reverb"]:
        fx += ["reverb", str(c["rev_amt"]), str(c.get("hf", 50)), str(c["room"])]
        fx += ["100", str(c["predelay"])] if "predelay" in c else []
    x = espeak(text, c["voice"], c["speed"], c["pitch"], c["amp"], c["gap"], fx)
    rng = np.random.default_rng(c["noise_seed"])
    p_sig = np.mean(x ** 2) + 1e-12 if "peak_db" in c else None  # training: speech power without the pads
    x = np.concatenate([np.zeros(int(c["pad0"] * SR)), x, np.zeros(int(c["pad1"] * SR))])
    kind = ("brown" if c["brown"] else "white") if c["noise"] is True else c["noise"]  # eval: a bool
    if kind and kind != "none":
        n = make_noise(kind, len(x), rng, c)
        p_sig = p_sig or np.mean(x ** 2) + 1e-12
        x = x + n * np.sqrt(p_sig / (np.mean(n ** 2) + 1e-12) / 10 ** (c["snr"] / 10))
    peak = np.max(np.abs(x)) + 1e-9
    if "peak_db" in c:
        x *= 10 ** (c["peak_db"] / 20) / peak
    elif peak > 0.98:
        x *= 0.98 / peak
    return np.round(x * 32767).astype(np.int16)


def write_wav(path, pcm):
    with wave.open(path, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(SR)
        w.writeframes(pcm.tobytes())


def gen_condition(r, category, fixed):
    """The "gen" held-out set: the eval conditions, with the category's silence; the reported
    utterances as users made them (plain espeak-ng output with their voice and speed)."""
    c = draw_condition(r, "gen")
    if fixed:
        c.update(fixed, pitch=50, amp=100, gap=0, reverb=False, noise=False, pad0=0, pad1=0)
    elif category == "number_word":
        c.update(pad0=r.uniform(0.3, 1.5), pad1=r.uniform(0.3, 1.5))
    elif category == "short":
        c.update(pad0=r.uniform(0.02, 0.1), pad1=r.uniform(0.02, 0.1), speed=r.randint(157, 164))
    return c


_speaker = None


def word_times(text, c):
    """Each word's [start, end) in the clip render() makes, in seconds: espeak-ng's word events
    (its library, the same synthesis), stretched by the tempo and shifted by the leading silence.
    A word ends where the next begins, the last where the synthesis ends. None when espeak-ng
    reports no start for a word."""
    global _speaker
    if _speaker is None:
        _speaker = espeak_words.Speaker()
    voice = "da" + ("+" + c["voice"] if c["voice"] else "")
    try:
        pcm, starts = _speaker.say(text, voice, c["speed"], c["pitch"], c["gap"], c["amp"])
    except RuntimeError:
        return None
    scale = 1.0 / (_speaker.rate * (c.get("tempo") or 1.0))
    lead = int(c["pad0"] * SR) / SR   # the samples render() puts before the speech
    edges = [lead + x * scale for x in starts + [len(pcm)]]
    return [[round(a, 3), round(b, 3)] for a, b in zip(edges, edges[1:])]


def job(args):
    i, (category, text, fixed), split, seed, outdir = args
    r = random.Random(f"{seed}-{split}-{i}")
    if split == "gen":
        c = gen_condition(r, category, fixed)
    else:
        c = draw_condition(r, split)
        if split == "train":
            draw_augmentation(r, c)
    pcm = render(text, c)
    rel = f"wav/{i // 1000:03d}/{split}_{i:06d}.wav"
    path = os.path.join(outdir, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    write_wav(path, pcm)
    row = {"audio": rel, "text": text, "duration": round(len(pcm) / SR, 3), "words": word_times(text, c)}
    row.update((k, c[k]) for k in ("voice", "speed", "pitch", "amp", "reverb", "noise", "tempo", "cents") if k in c)
    return row if category is None else {"category": category, **row}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("--split", choices=["train", "eval", "gen"], required=True)
    ap.add_argument("-n", type=int, required=True)
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--word-strings", type=float, default=0.0, help="weight of text_da.gen_word_string (training text)")
    ap.add_argument("--compose", type=float, default=0.0, help="weight of text_da.gen_compose (training text)")
    a = ap.parse_args()
    os.makedirs(a.outdir, exist_ok=True)
    if a.split == "gen":
        items = heldout_da.items(a.n, a.seed, VOCAB)
    else:
        items = [(None, t, None) for t in text_da.sentences(a.split, a.n, a.seed, VOCAB, unique=a.split == "eval",
                                                                 word_strings=a.word_strings, compose=a.compose)]
    work = [(i, it, a.split, a.seed, a.outdir) for i, it in enumerate(items)]
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
