"""Reference of src/audio/f0 in numpy (written from the description in
src/audio/f0.h and spec vevo2.md section 4.4, the YIN variant of the C++
port): per 2048-sample frame every 256 at 16 kHz, mean removed, symmetric
Hann, mean square < 1e-8 unvoiced, difference function and its cumulative
mean normalised form, lags 14..320, threshold 0.25 walked to the local
minimum, else the global minimum if <= 0.3, parabolic refinement; median of
the voiced frames. Also the semitone-shift rule, and Praat's
to_pitch_ac (Debian's praat binary, with Amphion's settings) for comparison.
"""
import os
import subprocess
import tempfile
import wave

import numpy as np

RATE = 16000
FRAME = 2048
HOP = 256
MIN_LAG, MAX_LAG = 14, 320


def sym_hann(n):
    return 0.5 - 0.5 * np.cos(2.0 * np.pi * np.arange(n) / (n - 1))


def cmnd(frame):
    """d'(tau) for tau = 0..MAX_LAG+1 of one windowed frame (float64)."""
    d = np.array([np.sum((frame[:FRAME - tau] - frame[tau:]) ** 2) for tau in range(1, MAX_LAG + 2)])
    cum = np.cumsum(d)
    out = np.ones(MAX_LAG + 2)
    tau = np.arange(1, MAX_LAG + 2)
    ok = cum > 0
    out[1:][ok] = d[ok] * tau[ok] / cum[ok]
    return out


def frame_f0(frame):
    """F0 of one frame and the decision margin (distance of the deciding d'
    values from their thresholds: small margins are near-ties)."""
    if np.mean(frame ** 2) < 1e-8:
        return 0.0, np.inf
    c = cmnd(frame)
    lags = np.arange(MIN_LAG, MAX_LAG + 1)
    below = np.nonzero(c[lags] < 0.25)[0]
    margin = np.min(np.abs(c[lags] - 0.25))
    if len(below):
        tau = int(lags[below[0]])
        while tau < MAX_LAG and c[tau + 1] < c[tau]:
            tau += 1
    else:
        tau = int(lags[np.argmin(c[lags])])
        margin = min(margin, abs(c[tau] - 0.3))
        if c[tau] > 0.3:
            return 0.0, margin
    a, b, cc = c[tau - 1], c[tau], c[tau + 1]
    den = a - 2 * b + cc
    shift = 0.5 * (a - cc) / den if den > 0 else 0.0
    if abs(shift) > 1:
        shift = 0.0
    return RATE / (tau + shift), margin


def track(x16):
    """Per-frame F0 (0 unvoiced) and margins of a 16 kHz float32 signal."""
    x16 = np.asarray(x16, dtype=np.float32)
    w = sym_hann(FRAME).astype(np.float32).astype(np.float64)
    frames = 0 if len(x16) < FRAME else 1 + (len(x16) - FRAME) // HOP
    f0, margins = np.zeros(frames), np.zeros(frames)
    for t in range(frames):
        s = x16[t * HOP:t * HOP + FRAME].astype(np.float64)
        f0[t], margins[t] = frame_f0((s - s.mean()) * w)
    return f0, margins


def median_voiced(f0):
    v = np.sort(f0[f0 > 0])
    return float(np.median(v)) if len(v) else 0.0


def semitone_shift(target_hz, source_hz):
    """Upstream's rule: round(12 log2(t/s)); > 12: % 12; < -12: % -12 (Python)."""
    if not (target_hz > 0 and source_hz > 0):
        return 0
    steps = int(round(12 * np.log2(target_hz / source_hz)))
    if steps > 12:
        steps = steps % 12
    if steps < -12:
        steps = steps % -12
    return steps


def write_wav16(path, x, rate):
    pcm = np.clip(np.round(np.asarray(x) * 32767), -32768, 32767).astype("<i2")
    with wave.open(path, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(pcm.tobytes())


PRAAT_SCRIPT = """form args
  sentence path
endform
s = Read from file: path$
p = To Pitch (ac): 256/16000, 50, 15, "no", 0.03, 0.6, 0.01, 0.35, 0.14, 1100
n = Get number of frames
for i to n
  v = Get value in frame: i, "Hertz"
  if v = undefined
    v = 0
  endif
  appendInfoLine: v
endfor
"""


def praat_f0(x16):
    """Praat's to_pitch_ac frames (0 unvoiced) with Amphion's settings, or
    None without the praat binary."""
    try:
        with tempfile.TemporaryDirectory() as tmp:
            wav, script = os.path.join(tmp, "x.wav"), os.path.join(tmp, "f0.praat")
            write_wav16(wav, x16, RATE)
            with open(script, "w") as f:
                f.write(PRAAT_SCRIPT)
            out = subprocess.run(["praat", "--run", script, wav], capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    return np.array([float(v) for v in out.stdout.split()])


def praat_median(f0):
    """Amphion's statistic: unvoiced frames interpolated between the voiced
    ones (ends held), then the median over all frames."""
    v = np.nonzero(f0 > 0)[0]
    if len(v) == 0:
        return 0.0
    filled = np.interp(np.arange(len(f0)), v, f0[v])
    return float(np.median(filled))
