"""What the Vevo2 route tests share: running programs, clips of espeak-ng
speech decoded as the model sees them, raw files for the drivers, and the
comparisons (relative error, ids equal up to VQ near-ties)."""
import os
import subprocess
import warnings

import numpy as np
from scipy.io import wavfile

# the build's audioc unless the environment names one (as ctest does)
AUDIOC = os.environ.get("AUDIOC") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../build/audioc")
RATE = 24000
TOL_WAV = 1e-3   # spec §6: after 16 FM layers x 64 evaluations and the vocoder's exp
NEAR_TIE = 1e-4
# libsndfile's WAVs carry a PEAK chunk scipy does not know
warnings.filterwarnings("ignore", category=wavfile.WavFileWarning)


def run(*cmd, **kw):
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)


def rel(a, b):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if a.shape != b.shape:
        return float("inf")
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-30))


def speech(work, name, text, voice, pitch, rate, seconds=None, channels=1):
    """espeak-ng speech at RATE (sox, no dither: the same samples every run), cut to SECONDS."""
    raw22 = os.path.join(work, name + "_22k.wav")
    out = os.path.join(work, name + ".wav")
    subprocess.run(["espeak-ng", "-v", voice, "-p", str(pitch), "-w", raw22, text], check=True)
    cmd = ["sox", "-D", raw22, "-r", str(rate), "-c", str(channels), "-b", "16", out]
    if seconds:
        cmd += ["trim", "0", f"{seconds:.6f}"]
    subprocess.run(cmd, check=True)
    return out


def load24(path):
    """What the model sees: audioc's decoder at 24 kHz mono (float WAV)."""
    out = path[:-4] + "_24k.f.wav"
    r = run(AUDIOC, "convert", "--rate", RATE, path, out)
    assert r.returncode == 0, r.stderr
    return wavfile.read(out)[1].astype(np.float32)


def raw(path, x):
    np.asarray(x, "<f4").tofile(path)
    return path


def ids_match(check, name, c_ids, ids, gaps):
    """C_IDS equal IDS except where the reference's top-2 cosine gap is below NEAR_TIE."""
    ok = len(c_ids) == len(ids)
    diff = [i for i in range(min(len(c_ids), len(ids))) if c_ids[i] != ids[i]]
    ties = [i for i in diff if gaps[i] < NEAR_TIE]
    if ties:
        print(f"{name}: {len(ties)} near-tie id(s) resolved differently (gaps {np.asarray(gaps)[ties]})")
    check(ok and len(diff) == len(ties), f"{name}: {len(diff) - len(ties)} ids differ of {len(c_ids)} "
          f"(C {list(c_ids[:12])}..., ref {list(ids[:12])}...)")
    if len(gaps):
        print(f"{name}: {len(c_ids)} ids, smallest top-2 gap {np.min(gaps):.2e}")
    return ok and not diff
