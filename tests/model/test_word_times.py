"""Word timestamps against the truth: held-out sentences said by held-out voices, each word's true
start taken from espeak-ng's word events (espeak_words.py), transcribed by `audioc transcribe
--word-timestamps` with the defaults and the bundled model. On the clips whose words come out
right, the word starts must be near the truth (median and 90th percentile of the error below the
limits; the model's frames are 80 ms)."""
import json
import os
import random
import subprocess
import sys
import wave

import numpy as np
import pytest
from scipy.signal import resample_poly

import testenv
from testenv import AUDIOC, BUNDLED_MODEL, ROOT

sys.path.insert(0, os.path.join(ROOT, "train"))
import synth  # noqa: E402
import text_da  # noqa: E402
from evaluate import normalize  # noqa: E402

MODEL = os.environ.get("TINY_DA_MODEL", BUNDLED_MODEL)
WORK = testenv.work("word_times")
N, SEED, SR = 24, 4242, 16000
LEAD, TRAIL = 0.6, 0.4                    # silence around the speech, seconds
MIN_RIGHT = 0.7                           # share of clips whose words must come out right
MAX_MEDIAN, MAX_P90 = 0.10, 0.20          # word start error limits, seconds


def test_word_starts_near_the_truth(audioc):
    """On the clips heard right, word starts are within MAX_MEDIAN (median) and MAX_P90 of espeak-ng's."""
    try:
        import espeak_words
        speaker = espeak_words.Speaker()
    except (OSError, RuntimeError) as e:
        pytest.skip(f"libespeak-ng is not usable ({e})")
    r = random.Random(SEED)
    texts = [t for t in text_da.sentences("eval", 4 * N, SEED, synth.VOCAB, unique=True) if len(t.split()) >= 3][:N]
    clips = []
    for i, text in enumerate(texts):
        voice = "da+" + r.choice(synth.EVAL_VOICES)
        lo, hi = synth.EVAL_SPEED[0]
        pcm, starts = speaker.say(text, voice, r.randint(lo, hi - 1))
        assert len(starts) == len(text.split()), f"espeak-ng reports {len(starts)} words for {text!r}"
        x = resample_poly(pcm.astype(np.float64), SR, speaker.rate)   # linear phase: no delay
        x = np.concatenate([np.zeros(int(LEAD * SR)), x, np.zeros(int(TRAIL * SR))])
        path = os.path.join(WORK, f"w{i:02d}.wav")
        with wave.open(path, "wb") as w:
            w.setnchannels(1), w.setsampwidth(2), w.setframerate(SR)
            w.writeframes(np.clip(np.round(x), -32768, 32767).astype("<i2").tobytes())
        clips.append((path, text, [LEAD + s / speaker.rate for s in starts]))

    p = subprocess.run([AUDIOC, "transcribe", "--model", MODEL, "--word-timestamps", "--format", "json",
                        "--no-progress"] + [c[0] for c in clips], capture_output=True, text=True)
    assert p.returncode == 0, f"audioc transcribe exits 0 ({p.returncode}: {p.stderr[-500:]})"
    out = {j["file"]: j for j in map(json.loads, p.stdout.splitlines())}
    errors, right = [], 0
    for path, text, truth in clips:
        j = out.get(path, {"text": "", "words": []})
        words = j.get("words", [])
        if normalize(" ".join(w["word"] for w in words)).split() != normalize(text).split():
            print(f"  words differ: {text!r} heard as {j['text']!r}")
            continue
        right += 1
        got = [w["start"] for w in words]
        assert all(w["start"] <= w["end"] for w in words) and got == sorted(got), (
                f"{os.path.basename(path)}: words in order, each start <= end")
        err = [abs(g - t) for g, t in zip(got, truth)]
        errors += err
        print(f"  {os.path.basename(path)} {text!r}: start errors (ms) " + " ".join(f"{1000 * e:.0f}" for e in err))
    assert right >= MIN_RIGHT * len(clips), f"{right} of {len(clips)} clips heard right (want >= {MIN_RIGHT:.0%})"
    if errors:
        med, p90 = float(np.median(errors)), float(np.percentile(errors, 90))
        print(f"{len(errors)} words: start error median {1000 * med:.0f} ms, 90th percentile {1000 * p90:.0f} ms, "
              f"max {1000 * max(errors):.0f} ms")
        assert med <= MAX_MEDIAN, f"median start error {med:.3f} s <= {MAX_MEDIAN} s"
        assert p90 <= MAX_P90, f"90th percentile start error {p90:.3f} s <= {MAX_P90} s"

