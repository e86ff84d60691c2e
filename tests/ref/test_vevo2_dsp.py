#!/usr/bin/python3
"""Parity of Vevo2's DSP front end (src/audio/resample_sinc, src/audio/chroma)
with its references, through the driver test_vevo2_dsp:

- the sinc resampler against torchaudio.functional.resample (defaults) for
  24000->16000, 44100->16000, 16000->24000, 48000->24000 and 48000->44100 on
  espeak-ng speech, noise and clips of 1 and 7 samples: same length, max
  abs difference <= 2e-6 (the kernels agree but for sin/cos rounding; the
  sums differ in order);
- chroma_stft (n_chroma 24, n_fft 1920, hop 480, sr 24000) against
  tests/ref/vevo2/chroma_ref.py on speech, 450 and 452 Hz tones (off the
  440 Hz grid: tuning -0.23 for the first), silence, noise and clips shorter than one window: tuning
  the same histogram bin (a different one only where the two bins' counts
  differ by no more than the residuals lying within 3e-5 of a bin edge,
  which float32 log2 rounding may move; then the chroma is checked against
  the reference at the C tuning), chroma max abs difference <= 1e-5, no NaN;
- the time rescale against torch F.interpolate(mode="linear",
  align_corners=False) within 1e-6.
Environment: VEVO2_DSP, TEST_WORK.
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import scipy.io.wavfile
import torch
import torchaudio.functional as AF

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "vevo2"))
import chroma_ref  # noqa: E402
import make_speech  # noqa: E402
from checker import Checker  # noqa: E402

DRIVER = os.environ["VEVO2_DSP"]
WORK = os.path.join(os.environ["TEST_WORK"], "vevo2_dsp")
RESAMPLE_TOL = 2e-6
CHROMA_TOL = 1e-5
INTERP_TOL = 1e-6
EDGE_EPS = 3e-5
check = Checker()


def f32file(name, x):
    path = os.path.join(WORK, name)
    np.asarray(x, dtype="<f4").tofile(path)
    return path


def driver(*args):
    p = subprocess.run([DRIVER] + [str(a) for a in args], capture_output=True, text=True)
    if not check(p.returncode == 0, f"test_vevo2_dsp {' '.join(map(str, args[:6]))}: {p.stderr.strip()}"):
        return None
    return p.stdout


def speech(rate):
    """The same two espeak-ng phrases (about 4 s) at RATE, as float32."""
    with tempfile.TemporaryDirectory() as tmp:
        spec = (f"speech_{rate}", "en-us", "en", [0.4], 0.3, 0.3, rate, None, -3)
        info = make_speech.make_clip(tmp, WORK, spec)
    sr, x = scipy.io.wavfile.read(os.path.join(WORK, info["file"]))
    assert sr == rate
    return (x.astype(np.float32) / 32768.0).astype(np.float32)


def resample_case(name, x, orig, new):
    want = AF.resample(torch.from_numpy(x), orig, new).numpy()
    out = os.path.join(WORK, f"rs_{name}.out")
    if driver("resample", orig, new, f32file(f"rs_{name}.in", x), out) is None:
        return
    got = np.fromfile(out, dtype="<f4")
    if not check(got.shape == want.shape, f"resample {name}: {got.shape[0]} samples, torchaudio {want.shape[0]}"):
        return
    d = float(np.max(np.abs(got.astype(np.float64) - want))) if got.size else 0.0
    check(d <= RESAMPLE_TOL, f"resample {name}: max abs difference {d:.3g} > {RESAMPLE_TOL}")
    print(f"  resample {name:28s} {orig}->{new}: {x.size} -> {got.size} samples, max abs diff {d:.2e}")


def near_edge_count(residual, edges):
    r = residual.astype(np.float64)
    return int(np.sum(np.min(np.abs(r[:, None] - edges[None, :]), axis=1) < EDGE_EPS))


def chroma_case(name, x, T):
    want, tuning, details = chroma_ref.vevo2_chroma(x, T)
    out = os.path.join(WORK, f"ch_{name}.out")
    so = driver("chroma", 24000, 1920, 480, 24, T, f32file(f"ch_{name}.in", x), out)
    if so is None:
        return
    c_tuning = float(so.split()[1])
    got = np.fromfile(out, dtype="<f4").reshape(T, 24)
    check(np.all(np.isfinite(got)), f"chroma {name}: not finite")
    note = ""
    if c_tuning != tuning:
        residual, counts, edges = details if details else (np.zeros(0), None, None)
        near = near_edge_count(residual, edges) if details else 0
        ci = int(np.argmin(np.abs(edges[:-1] - c_tuning))) if details else -1
        gap = int(counts.max() - counts[ci]) if details else -1
        ok = details is not None and abs(edges[ci] - c_tuning) < 1e-12 and gap <= near
        check(ok, f"chroma {name}: tuning {c_tuning} differs from the reference's {tuning} "
                  f"(count gap {gap}, residuals near an edge {near})")
        note = f" (near-tie: reference {tuning:.2f}, count gap {gap} <= {near} residuals within {EDGE_EPS} of an edge)"
        want, _, _ = chroma_ref.vevo2_chroma(x, T, tuning=c_tuning)
    d = float(np.max(np.abs(got.astype(np.float64) - want))) if T else 0.0
    check(d <= CHROMA_TOL, f"chroma {name}: max abs difference {d:.3g} > {CHROMA_TOL}")
    print(f"  chroma {name:14s} {x.size:6d} samples, T {T:4d}: tuning {c_tuning:+.2f}{note}, max abs diff {d:.2e}")
    return c_tuning


def interp_case(t_in, C, t_out, rng):
    x = rng.standard_normal((t_in, C)).astype(np.float32)
    want = torch.nn.functional.interpolate(torch.from_numpy(x).T[None], size=t_out, mode="linear",
                                           align_corners=False)[0].T.numpy()
    out = os.path.join(WORK, "interp.out")
    if driver("interp", t_in, C, t_out, f32file("interp.in", x), out) is None:
        return
    got = np.fromfile(out, dtype="<f4").reshape(t_out, C)
    d = float(np.max(np.abs(got - want)))
    check(d <= INTERP_TOL, f"interp {t_in}->{t_out}: max abs difference {d:.3g}")
    print(f"  interp {t_in:4d} -> {t_out:4d} frames x {C}: max abs diff {d:.2e}")


def main():
    os.makedirs(WORK, exist_ok=True)
    rng = np.random.default_rng(20260)
    s24, s16, s44, s48 = speech(24000), speech(16000), speech(44100), speech(48000)
    noise = lambda n: (0.3 * rng.standard_normal(n)).astype(np.float32)  # noqa: E731
    print("resampler vs torchaudio.functional.resample:")
    for name, x, orig, new in [("speech_24k", s24, 24000, 16000), ("noise_24k", noise(48000), 24000, 16000),
                               ("speech_44k", s44, 44100, 16000), ("noise_44k", noise(44100), 44100, 16000),
                               ("speech_16k", s16, 16000, 24000), ("noise_16k", noise(16001), 16000, 24000),
                               ("speech_48k", s48, 48000, 24000), ("noise_48k_to_44k", noise(48000), 48000, 44100),
                               ("one_sample", noise(1), 24000, 16000), ("seven_samples", noise(7), 44100, 16000)]:
        resample_case(name, x, orig, new)

    print("chroma vs chroma_ref (librosa chroma_stft, n_chroma 24):")
    # 450 Hz is FFT bin 36 (no parabolic shift), 24*log2(450/440) = 0.778
    # quarter tones above A4: a deviation of -0.222, histogram bin -0.23
    t = np.arange(3 * 24000) / 24000.0
    tone = (0.5 * np.sin(2 * np.pi * 450.0 * t)).astype(np.float32)
    tuning = chroma_case("tone_450hz", tone, tone.size // 480)
    check(tuning is not None and abs(tuning - (-0.23)) < 1e-9, f"450 Hz tone: tuning {tuning}, expected -0.23")
    tone = (0.5 * np.sin(2 * np.pi * 452.0 * t)).astype(np.float32)
    chroma_case("tone_452hz", tone, tone.size // 480)
    chroma_case("speech", s24, s24.size // 480)
    tuning = chroma_case("silence", np.zeros(24000, np.float32), 50)
    check(tuning == 0.0, f"silence: tuning {tuning}")
    start = np.argmax(np.abs(s24) > 0.05)
    chroma_case("short_1000", s24[start:start + 1000], 1000 // 480)
    chroma_case("short_300", s24[start:start + 300], 1)
    chroma_case("noise", noise(24000), 50)

    print("time rescale vs torch F.interpolate(linear, align_corners=False):")
    for t_in, t_out in [(100, 73), (50, 121), (7, 7), (1, 5), (9, 1), (250, 333)]:
        interp_case(t_in, 24, t_out, rng)
    return check.finish()


if __name__ == "__main__":
    sys.exit(main())
