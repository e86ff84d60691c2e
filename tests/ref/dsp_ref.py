#!/usr/bin/python3
"""Golden arrays for the DSP layer (src/audio: FFT, STFT, ISTFT, log-mel),
from numpy.fft, torch.stft and torch.istft on fixed signals.

Usage: dsp_ref.py OUTDIR. Writes raw little-endian float32 files and
OUTDIR/manifest.txt, one case a line, which tests/unit/test_dsp.c reads:

  fft|ifft|rfft|irfft N IN OUT
  stft N_FFT HOP WIN LAYOUT PAD KIND N X WINDOW OUT
  istft N_FFT HOP WIN LAYOUT FRAMES LENGTH SPEC WINDOW OUT   (LENGTH -1: default)
  istft_fails N_FFT HOP WIN LAYOUT FRAMES SPEC WINDOW        (torch.istft raises)
  whisper N X OUT                                            (Whisper log-mel [T][80])

LAYOUT is center|start|same, PAD zero|reflect, KIND power|magnitude|complex;
complex arrays are (re, im) pairs, spectrograms [frame][bin]. Where torch has
no such option the reference is spelled out with numpy.pad + torch.stft
(center=False): reflect padding longer than the signal (numpy.pad's
repeated mirroring, which torch refuses) and Vocos's "same" padding
(reflect (n_fft - hop)/2, then no centring; its ISTFT: overlap-add, divide
by the squared-window sum, drop (n_fft - hop)/2 at each end).
"""
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "hviske_asr"))
from cohere_ref import slaney_mel  # noqa: E402

OUT = sys.argv[1]
os.makedirs(OUT, exist_ok=True)
rng = np.random.default_rng(20261201)
lines = []
count = 0


def save(a):
    global count
    count += 1
    name = "a%03d.f32" % count
    np.ascontiguousarray(a, dtype="<f4").tofile(os.path.join(OUT, name))
    return name


def cpx(a):
    """complex [..] -> float32 [.., 2]"""
    a = np.asarray(a)
    return np.stack([a.real, a.imag], axis=-1).astype(np.float32)


def signal(n):
    """Unit-scale test audio: two tones, a chirp and noise."""
    t = np.arange(n) / 16000.0
    x = 0.5 * np.sin(2 * np.pi * 440 * t) + 0.2 * np.sin(2 * np.pi * 3100 * t + 1)
    x += 0.15 * np.sin(2 * np.pi * (200 + 2000 * t) * t) + 0.05 * rng.standard_normal(n)
    return x.astype(np.float32)


# ---- FFT: numpy in float64 of the float32 inputs --------------------------------
for n in (1, 2, 7, 400, 401, 512, 1920, 2048):
    z = (rng.uniform(-1, 1, n) + 1j * rng.uniform(-1, 1, n)).astype(np.complex64)
    zin = save(cpx(z))
    lines.append(f"fft {n} {zin} {save(cpx(np.fft.fft(z.astype(np.complex128))))}")
    lines.append(f"ifft {n} {zin} {save(cpx(np.fft.ifft(z.astype(np.complex128))))}")
    x = rng.uniform(-1, 1, n).astype(np.float32)
    lines.append(f"rfft {n} {save(x)} {save(cpx(np.fft.rfft(x.astype(np.float64))))}")
    # bins with imaginary parts at 0 and n/2 too, which a c2r transform ignores
    b = (rng.uniform(-1, 1, n // 2 + 1) + 1j * rng.uniform(-1, 1, n // 2 + 1)).astype(np.complex64)
    lines.append(f"irfft {n} {save(cpx(b))} {save(np.fft.irfft(b.astype(np.complex128), n))}")


# ---- STFT ----------------------------------------------------------------------
def hann(n, periodic=True):
    return torch.hann_window(n, periodic=periodic, dtype=torch.float32)


def hamming(n):
    return torch.hamming_window(n, periodic=True, dtype=torch.float32)


def stft_ref(x, n_fft, hop, win, window, layout, pad):
    """complex [frames, bins] as torch computes it."""
    xt = torch.from_numpy(x)
    mode = {"zero": "constant", "reflect": "reflect"}[pad]
    if layout == "same":
        p = (n_fft - hop) // 2
        xt = torch.from_numpy(np.pad(x, p, mode=mode))
    elif layout == "center" and pad == "reflect" and len(x) <= n_fft // 2:
        # torch refuses; numpy.pad mirrors again at the other end
        xt = torch.from_numpy(np.pad(x, n_fft // 2, mode="reflect"))
        layout = "start"
    s = torch.stft(xt, n_fft, hop, win, window, center=layout == "center", pad_mode=mode,
                   return_complex=True)
    return s.T.numpy()


def add_stft(n_fft, hop, win, window, layout, pad, kind, n, x=None):
    x = signal(n) if x is None else x
    s = stft_ref(x, n_fft, hop, win, window, layout, pad).astype(np.complex128)
    ref = {"power": np.abs(s) ** 2, "magnitude": np.abs(s), "complex": cpx(s)}[kind]
    lines.append(f"stft {n_fft} {hop} {win} {layout} {pad} {kind} {n} {save(x)} {save(window.numpy())} "
                 f"{save(ref)}")


add_stft(400, 160, 400, hann(400), "center", "reflect", "power", 20800)       # Whisper
add_stft(512, 160, 400, hann(400, False), "center", "zero", "complex", 16123)  # NeMo: short window
add_stft(1920, 480, 1920, hann(1920), "center", "zero", "power", 24000)       # chroma
add_stft(2048, 512, 2048, hann(2048), "center", "zero", "complex", 9000)      # phase vocoder
add_stft(1920, 480, 1920, hann(1920), "same", "reflect", "magnitude", 12345)  # timbre mel
add_stft(401, 100, 301, hann(301), "center", "reflect", "magnitude", 5003)    # odd sizes
add_stft(400, 160, 400, hamming(400), "start", "zero", "complex", 4321)       # no centring
add_stft(512, 128, 512, hann(512), "center", "reflect", "power", 150)         # reflect > signal
add_stft(16, 4, 16, hann(16), "center", "reflect", "complex", 1)              # one sample
add_stft(16, 4, 12, hann(12), "center", "zero", "complex", 3)                 # zeros > signal


# ---- ISTFT ---------------------------------------------------------------------
def add_istft(n_fft, hop, win, window, layout, frames, length=-1, spec=None):
    bins = n_fft // 2 + 1
    if spec is None:
        spec = (rng.uniform(-1, 1, (frames, bins)) + 1j * rng.uniform(-1, 1, (frames, bins))).astype(np.complex64)
    st = torch.from_numpy(spec.T.copy())
    if layout == "same":
        # Vocos padding="same"
        frame = torch.fft.irfft(st, n_fft, dim=0) * window[:, None]
        total = (frames - 1) * hop + n_fft
        y = torch.zeros(total)
        env = torch.zeros(total)
        for t in range(frames):
            y[t * hop:t * hop + n_fft] += frame[:, t]
            env[t * hop:t * hop + n_fft] += window ** 2
        p = (n_fft - hop) // 2
        y, env = y[p:total - p], env[p:total - p]
        assert bool((env > 1e-11).all())
        ref = (y / env).numpy()
        assert length == -1
    else:
        ref = torch.istft(st, n_fft, hop, win, window, center=layout == "center",
                          length=None if length < 0 else length).numpy()
    lines.append(f"istft {n_fft} {hop} {win} {layout} {frames} {length} {save(cpx(spec))} "
                 f"{save(window.numpy())} {save(ref)}")


add_istft(400, 160, 400, hann(400), "center", 40)
x = signal(16000)
add_istft(400, 160, 400, hann(400), "center", 101, 16000,
          stft_ref(x, 400, 160, 400, hann(400), "center", "reflect"))    # a real STFT
add_istft(400, 160, 400, hann(400), "center", 30, 5000)                  # past the end: zeros
add_istft(400, 160, 400, hann(400), "center", 30, 1000)                  # cut short
add_istft(512, 128, 400, hann(400), "center", 25)                        # short window
add_istft(401, 100, 401, hann(401), "center", 20)                        # odd n_fft
add_istft(400, 160, 400, hamming(400), "start", 20)                      # no centring
add_istft(1920, 480, 1920, hann(1920), "same", 12)                       # Vocos

# no centring with a Hann window: the squared-window sum is 0 at sample 0
spec = (rng.uniform(-1, 1, (10, 201)) + 1j * rng.uniform(-1, 1, (10, 201))).astype(np.complex64)
try:
    torch.istft(torch.from_numpy(spec.T.copy()), 400, 160, 400, hann(400), center=False)
    raise SystemExit("torch.istft was expected to refuse a zero window sum")
except RuntimeError:
    pass
lines.append(f"istft_fails 400 160 400 start 10 {save(cpx(spec))} {save(hann(400).numpy())}")

# ---- Whisper log-mel (openai-whisper's recipe) ----------------------------------
n = 32000
x = signal(n)
s = torch.stft(torch.from_numpy(x), 400, 160, window=hann(400), return_complex=True)  # reflect
power = s[..., :-1].abs() ** 2
mel = torch.from_numpy(slaney_mel(80, 400, 16000).astype(np.float32)) @ power
logmel = torch.clamp(mel, min=1e-10).log10()
logmel = torch.maximum(logmel, logmel.max() - 8.0)
logmel = (logmel + 4.0) / 4.0
lines.append(f"whisper {n} {save(x)} {save(logmel.T.numpy())}")

with open(os.path.join(OUT, "manifest.txt"), "w") as f:
    f.write("\n".join(lines) + "\n")
print(f"dsp_ref: {len(lines)} cases in {OUT}")
