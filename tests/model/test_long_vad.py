"""Long audio with the defaults (the bundled Silero VAD finds the speech):
36 held-out utterances of the training synthesizer, 2.5 s of silence
between them, in one file (sox -D). The bundled model's WER on the whole
file must be within 3 points of its WER on the same utterances transcribed
one by one, with one segment per utterance; 0.6 s of silence, a 440 Hz
tone and white noise give an empty transcript (no invented text)."""
import json
import os
import subprocess
import sys

import pytest

import testenv
from testenv import AUDIOC, BUNDLED_MODEL, ROOT

sys.path.insert(0, os.path.join(ROOT, "train"))
from evaluate import score  # noqa: E402

WORK = testenv.work("long_vad")
N, SEED, PAUSE_S, MAX_GAP = 36, 4242, 2.5, 3.0


def sh(*cmd):
    subprocess.run(cmd, check=True, capture_output=True)


def transcribe(*args):
    env = dict(os.environ)
    env.pop("AUDIOC_VAD_MODEL", None)   # the bundled VAD
    p = subprocess.run([AUDIOC, "transcribe", "--model", BUNDLED_MODEL, "--format", "json", "--no-progress", *args],
                       capture_output=True, text=True, env=env)
    assert p.returncode == 0, f"audioc transcribe {args[:2]} exits 0 ({p.returncode}: {p.stderr[-300:]})"
    return [json.loads(line) for line in p.stdout.splitlines()]


@pytest.fixture(scope="module")
def utterances(audioc):
    """The held-out utterances (made by train/synth.py once): (files, manifest rows)."""
    data = os.path.join(WORK, "utt")
    if not os.path.exists(os.path.join(data, "manifest.jsonl")):
        sh("/usr/bin/python3", os.path.join(ROOT, "train", "synth.py"), data, "--split", "eval", "-n", str(N),
           "--seed", str(SEED), "--jobs", "2")
    rows = [json.loads(line) for line in open(os.path.join(data, "manifest.jsonl"), encoding="utf-8")]
    return [os.path.join(data, r["audio"]) for r in rows], rows


def test_long_file_as_one_by_one(utterances):
    """The long file's WER is within MAX_GAP points of one by one, one segment per utterance, in place."""
    files, rows = utterances
    ref = " ".join(r["text"] for r in rows)
    pause, long = os.path.join(WORK, "pause.wav"), os.path.join(WORK, "long.wav")
    sh("sox", "-n", "-r", "16000", "-b", "16", "-c", "1", pause, "trim", "0", str(PAUSE_S))
    parts = [x for f in files for x in (f, pause)][:-1]
    sh("sox", "-D", *parts, long)

    one = {j["file"]: j["text"] for j in transcribe(*files)}
    wer_one = score([ref], [" ".join(one.get(f, "") for f in files)])["wer"]
    j = (transcribe(long) or [{}])[0]
    wer_long = score([ref], [j.get("text", "")])["wer"]
    n_seg = len(j.get("segments", []))
    print(f"{N} utterances, {j.get('duration', 0):.1f} s: WER {wer_one:.2f} % one by one, {wer_long:.2f} % as one "
          f"file with the defaults ({n_seg} segments)")
    assert wer_long <= wer_one + MAX_GAP, (f"WER of the long file {wer_long:.2f} % within {MAX_GAP} points of "
                                           f"one by one {wer_one:.2f} %")
    assert n_seg == N, f"one segment per utterance: {n_seg} segments for {N} utterances"
    t, starts = 0.0, []
    for r in rows:
        starts.append(t)
        t += r["duration"] + PAUSE_S
    inside = all(any(s0 - 0.45 <= s["start"] and s["end"] <= s0 + r["duration"] + 0.45
                     for s0, r in zip(starts, rows)) for s in j.get("segments", []))
    assert inside, "every segment lies within its utterance and the 400 ms padding"


@pytest.mark.parametrize("name, effect", [("silence", ["trim", "0", "0.6"]),
                                          ("tone", ["synth", "3", "sine", "440", "vol", "0.5"]),
                                          ("noise", ["synth", "3", "whitenoise", "vol", "0.3"])])
def test_no_speech_no_text(audioc, name, effect):
    """Silence, a tone and noise give an empty transcript (no invented text)."""
    path = os.path.join(WORK, name + ".wav")
    sh("sox", "-n", "-r", "16000", "-b", "16", "-c", "1", path, *effect)
    j = (transcribe(path) or [{}])[0]
    assert j.get("text") == "" and j.get("segments") == [], f"{name}: empty transcript, no segments ({j})"

