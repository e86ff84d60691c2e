"""The examples (examples/) run as their usage says: the C program and the
Python script each transcribe a sample with the bundled model, as the CLI
does without a VAD, and say a sentence with a tiny Vevo2 package."""
import os
import subprocess
import wave

import pytest

import testenv
from testenv import AUDIOC, BUNDLED_MODEL, PY, ROOT, work

SAMPLE = os.path.join(ROOT, "samples", "da_04_sentence.flac")
EXAMPLE = os.environ.get("AUDIOC_EXAMPLE", os.path.join(testenv.BUILD, "examples", "transcribe_and_speak"))


def expected():
    text = subprocess.run([AUDIOC, "transcribe", "--no-vad", "-f", "srt", SAMPLE], capture_output=True,
                          text=True).stdout
    return text.strip().splitlines()[-1]


def check(cmd, out, env=None):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    assert p.returncode == 0, f"{cmd[0]}: {p.stderr.strip()[-600:]}"
    lines = p.stdout.splitlines()
    assert lines[0].startswith("audio.c ") and lines[1].endswith("] " + expected()), p.stdout
    with wave.open(out) as w:
        assert w.getframerate() == 24000 and w.getnframes() > 0 and w.getnchannels() == 1
    assert lines[2].startswith(out), p.stdout


def test_c_example(vevo2_package):
    """examples/transcribe_and_speak.c, built by CMake against libaudioc.a."""
    out = os.path.join(work("examples"), "c.wav")
    check([EXAMPLE, BUNDLED_MODEL, SAMPLE, vevo2_package("F32", 11), SAMPLE, "Hello there.", out], out)


def test_python_example(vevo2_package):
    """examples/transcribe_and_speak.py over the build's libaudioc.so."""
    if testenv.SANITIZED:
        pytest.skip("a sanitized library cannot load into a plain python")
    out = os.path.join(work("examples"), "py.wav")
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"), AUDIOC_LIBRARY=testenv.AUDIOC_SHARED)
    check([PY, os.path.join(ROOT, "examples", "transcribe_and_speak.py"), BUNDLED_MODEL, SAMPLE,
           vevo2_package("F32", 11), SAMPLE, "Hello there.", out], out, env)
