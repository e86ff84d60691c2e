"""Reference of librosa's effects.pitch_shift (librosa 0.10 defaults, as
Amphion's Vevo2 calls it on the chromagram's input), written from the
algorithm in numpy, without librosa:

time_stretch(y, rate): centred STFT (n_fft 2048, hop 512, periodic Hann,
zero padding; frames computed in float64 and stored as complex64 as
librosa does), phase_vocoder (below), ISTFT to round(len / rate) samples.
pitch_shift(y, sr, steps): rate = 2^(-steps/12), time_stretch, resample from
sr/rate to sr with soxr HQ (none when the rates are equal), fix length.

The resampler is libsoxr itself (libsoxr.so.0 through ctypes), called the
way python-soxr's soxr.resample(x, in, out, "HQ") calls it: float32 in and
out, SOXR_HQ without flags, chunks of 48000*in/out input samples, a flush,
at most int(n*out/in + 1) samples. So the resampling step is checked against
the same library, not an independent implementation; `soxr_oneshot` (one
call over the whole signal) is there to show the chunking does not matter.

dtypes follow librosa under numpy 1.x: angles and magnitudes of the
complex64 STFT are float32; the magnitude interpolation is float32; the
phase advance is float64; the phase accumulator is float32. The angles are
the float32 nearest to the exact ones (numpy's float32 arctan2 is within an
ulp or two of them; the float32 accumulator makes any such ulp last, so the
C code and this reference agree on the rounding instead).
"""
import ctypes

import numpy as np

N_FFT = 2048
HOP = 512


def hann(n):
    """Periodic Hann (scipy.signal.get_window('hann', n, fftbins=True))."""
    return 0.5 - 0.5 * np.cos(2.0 * np.pi * np.arange(n) / n)


def stft(y):
    """librosa.stft(y) with the defaults: complex64 [bins, frames]."""
    w = hann(N_FFT)
    yp = np.pad(y.astype(np.float64), (N_FFT // 2, N_FFT // 2))
    frames = 1 + (len(yp) - N_FFT) // HOP
    idx = np.arange(N_FFT)[None, :] + HOP * np.arange(frames)[:, None]
    return np.fft.rfft(yp[idx] * w, axis=1).T.astype(np.complex64)


def phase_vocoder(D, rate, acc=np.float32):
    """librosa.phase_vocoder(D, rate) with hop n_fft/4, D complex64 [bins, frames].
    ACC=np.float64 keeps the phase accumulator in float64 (not librosa: to
    show how much its float32 rounding moves the result)."""
    bins, frames = D.shape
    time_steps = np.arange(0, frames, rate, dtype=np.float64)
    out = np.zeros((bins, len(time_steps)), dtype=np.complex64)
    phi_advance = np.linspace(0, np.pi * HOP, bins)
    Dp = np.pad(D, [(0, 0), (0, 2)]).astype(np.complex128)
    # float32 magnitudes and angles, each the nearest float32 to the exact value
    mags = np.abs(Dp).astype(np.float32)
    angles = np.angle(Dp).astype(np.float32)
    phase_acc = angles[:, 0].astype(acc)
    for t, step in enumerate(time_steps):
        i = int(step)
        alpha = np.mod(step, 1.0)
        mag = np.float32(1.0 - alpha) * mags[:, i] + np.float32(alpha) * mags[:, i + 1]
        out[:, t] = (np.cos(phase_acc) + 1j * np.sin(phase_acc)).astype(np.complex64) * mag
        dphase = (angles[:, i + 1] - angles[:, i]).astype(np.float64) - phi_advance
        dphase = dphase - 2.0 * np.pi * np.round(dphase / (2.0 * np.pi))
        phase_acc = (phase_acc.astype(np.float64) + (phi_advance + dphase)).astype(acc)
    return out


def istft(D, length):
    """librosa.istft(D, length=length) with the defaults, float32."""
    w = hann(N_FFT)
    frames = D.shape[1]
    total = N_FFT + HOP * (frames - 1)
    y = np.zeros(max(total, length + N_FFT), dtype=np.float64)
    wss = np.zeros_like(y)
    seg = np.fft.irfft(D.astype(np.complex128), n=N_FFT, axis=0).T * w
    for t in range(frames):
        y[t * HOP:t * HOP + N_FFT] += seg[t]
        wss[t * HOP:t * HOP + N_FFT] += w * w
    y, wss = y[N_FFT // 2:N_FFT // 2 + length], wss[N_FFT // 2:N_FFT // 2 + length]
    nz = wss > np.finfo(np.float32).tiny
    y[nz] /= wss[nz]
    return y.astype(np.float32)


def stretch_length(n, rate):
    return int(round(n / rate))   # Python's round: half to even


def time_stretch(y, rate, acc=np.float32):
    """librosa.effects.time_stretch (ACC: see phase_vocoder)."""
    return istft(phase_vocoder(stft(y), rate, acc), stretch_length(len(y), rate))


# ---- libsoxr through ctypes ----------------------------------------------

class _IoSpec(ctypes.Structure):
    _fields_ = [("itype", ctypes.c_int), ("otype", ctypes.c_int), ("scale", ctypes.c_double),
                ("e", ctypes.c_void_p), ("flags", ctypes.c_ulong)]


class _QualitySpec(ctypes.Structure):
    _fields_ = [("precision", ctypes.c_double), ("phase_response", ctypes.c_double),
                ("passband_end", ctypes.c_double), ("stopband_begin", ctypes.c_double),
                ("e", ctypes.c_void_p), ("flags", ctypes.c_ulong)]


SOXR_FLOAT32_I = 0
SOXR_HQ = 4
_lib = None


def _soxr():
    global _lib
    if _lib is None:
        lib = ctypes.CDLL("libsoxr.so.0")
        lib.soxr_io_spec.restype = _IoSpec
        lib.soxr_io_spec.argtypes = [ctypes.c_int, ctypes.c_int]
        lib.soxr_quality_spec.restype = _QualitySpec
        lib.soxr_quality_spec.argtypes = [ctypes.c_ulong, ctypes.c_ulong]
        lib.soxr_create.restype = ctypes.c_void_p
        lib.soxr_create.argtypes = [ctypes.c_double, ctypes.c_double, ctypes.c_uint,
                                    ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(_IoSpec),
                                    ctypes.POINTER(_QualitySpec), ctypes.c_void_p]
        lib.soxr_process.restype = ctypes.c_char_p
        lib.soxr_process.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t,
                                     ctypes.POINTER(ctypes.c_size_t), ctypes.c_void_p, ctypes.c_size_t,
                                     ctypes.POINTER(ctypes.c_size_t)]
        lib.soxr_delete.argtypes = [ctypes.c_void_p]
        lib.soxr_oneshot.restype = ctypes.c_char_p
        lib.soxr_oneshot.argtypes = [ctypes.c_double, ctypes.c_double, ctypes.c_uint,
                                     ctypes.c_void_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t),
                                     ctypes.c_void_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t),
                                     ctypes.POINTER(_IoSpec), ctypes.POINTER(_QualitySpec), ctypes.c_void_p]
        _lib = lib
    return _lib


def _specs():
    lib = _soxr()
    return lib.soxr_io_spec(SOXR_FLOAT32_I, SOXR_FLOAT32_I), lib.soxr_quality_spec(SOXR_HQ, 0)


def _ptr(a, offset=0):
    return a.ctypes.data + 4 * offset


def soxr_resample(x, in_rate, out_rate):
    """python-soxr's soxr.resample(x, in_rate, out_rate, quality='HQ') for mono float32."""
    lib = _soxr()
    x = np.ascontiguousarray(x, dtype=np.float32)
    io, q = _specs()
    err = ctypes.c_char_p()
    r = lib.soxr_create(in_rate, out_rate, 1, ctypes.byref(err), ctypes.byref(io), ctypes.byref(q), None)
    assert r and not err.value, err.value
    olen = int(len(x) * out_rate / in_rate + 1)
    chunk = int(48000 * in_rate / out_rate)
    y = np.zeros(olen, dtype=np.float32)
    pos, done = 0, ctypes.c_size_t()
    for i in range(0, len(x), chunk):
        n = min(chunk, len(x) - i)
        e = lib.soxr_process(r, _ptr(x, i), n, None, _ptr(y, pos), olen - pos, ctypes.byref(done))
        assert not e, e
        pos += done.value
    e = lib.soxr_process(r, None, 0, None, _ptr(y, pos), olen - pos, ctypes.byref(done))
    assert not e, e
    pos += done.value
    lib.soxr_delete(r)
    return y[:pos]


def soxr_oneshot(x, in_rate, out_rate):
    """soxr_oneshot over the whole signal with the same specs and output room."""
    lib = _soxr()
    x = np.ascontiguousarray(x, dtype=np.float32)
    io, q = _specs()
    olen = int(len(x) * out_rate / in_rate + 1)
    y = np.zeros(olen, dtype=np.float32)
    done = ctypes.c_size_t()
    e = lib.soxr_oneshot(in_rate, out_rate, 1, _ptr(x), len(x), None, _ptr(y), olen, ctypes.byref(done),
                         ctypes.byref(io), ctypes.byref(q), None)
    assert not e, e
    return y[:done.value]


def fix_length(y, n):
    return y[:n] if len(y) >= n else np.pad(y, (0, n - len(y)))


def pitch_shift(y, sr, steps, stretched=None):
    """librosa.effects.pitch_shift(y, sr=sr, n_steps=steps); STRETCHED: a
    time-stretched signal to resample instead of computing one."""
    rate = 2.0 ** (-float(steps) / 12)
    ys = time_stretch(y, rate) if stretched is None else stretched
    orig_sr = float(sr) / rate
    if orig_sr != sr:
        ys = fix_length(soxr_resample(ys, orig_sr, sr), int(np.ceil(len(ys) * sr / orig_sr)))
    return fix_length(ys, len(y)).astype(np.float32)
