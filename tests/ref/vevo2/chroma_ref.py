#!/usr/bin/python3
"""librosa's chroma_stft as Vevo2 calls it, written in numpy from librosa's
documented algorithm (librosa itself is not a dependency): the centred STFT
power, estimate_tuning (piptrack + pitch_tuning), filters.chroma and the
per-frame max normalisation. Arrays keep librosa's dtypes: float32 for the
spectrogram, the peaks and the residuals, float64 for the filterbank (then
stored as float32). Layout as librosa: [bins][frames], [n_chroma][frames].
"""
import numpy as np
import scipy.signal

F32 = np.float32


def stft_power(y, n_fft, hop):
    """|stft(y, center=True, pad_mode="constant", window="hann")|**2, float32:
    the windowed frames go through a float64 FFT, stored as complex64."""
    y = np.asarray(y, dtype=F32)
    window = scipy.signal.get_window("hann", n_fft, fftbins=True)
    yp = np.pad(y, (n_fft // 2, n_fft // 2), mode="constant")
    n_frames = 1 + (len(yp) - n_fft) // hop
    idx = np.arange(n_fft)[None, :] + hop * np.arange(n_frames)[:, None]
    D = np.fft.rfft(window[None, :] * yp[idx], axis=-1).astype(np.complex64)
    return (np.abs(D) ** 2).T  # float32 [bins][frames]


def localmax(x):
    """x[k] > x[k-1] and x[k] >= x[k+1] along axis 0, edges padded with themselves."""
    xp = np.pad(x, [(1, 1), (0, 0)], mode="edge")
    return (x > xp[:-2]) & (x >= xp[2:])


def parabolic_shift(S):
    """The vertex offset of the parabola through each bin and its neighbours
    (librosa's numba stencil: a and b in float64, 0 where |b| >= |a| and at
    the edges), float32."""
    shift = np.zeros_like(S)
    up, mid, down = S[2:], S[1:-1], S[:-2]
    a = (up + down).astype(np.float64) - 2 * mid.astype(np.float64)
    b = (up - down).astype(np.float64) / 2
    with np.errstate(divide="ignore", invalid="ignore"):
        shift[1:-1] = np.where(np.abs(b) >= np.abs(a), 0.0, -b / a)
    return shift


def piptrack(S, sr, fmin=150.0, fmax=4000.0, threshold=0.1):
    n_fft = 2 * (S.shape[0] - 1)
    fmax = min(fmax, float(sr) / 2)
    freqs = np.fft.rfftfreq(n=n_fft, d=1.0 / sr)
    avg = np.gradient(S, axis=0)
    shift = parabolic_shift(S)
    dskew = 0.5 * avg * shift
    pitches = np.zeros_like(S)
    mags = np.zeros_like(S)
    freq_mask = ((fmin <= freqs) & (freqs < fmax))[:, None]
    ref = threshold * np.max(S, axis=0)[None, :]
    idx = np.nonzero(freq_mask & localmax(S * (S > ref)))
    pitches[idx] = (idx[0] + shift[idx]) * float(sr) / n_fft
    mags[idx] = S[idx] + dskew[idx]
    return pitches, mags


def tuning_residuals(frequencies, bins_per_octave):
    """pitch_tuning's deviations from the A440 grid, float32, in [-0.5, 0.5)."""
    frequencies = frequencies[frequencies > 0]
    residual = np.mod(bins_per_octave * np.log2(frequencies / (440.0 / 16)), 1.0)
    residual[residual >= 0.5] -= 1.0
    return residual


def histogram(residual, resolution=0.01):
    bins = np.linspace(-0.5, 0.5, int(np.ceil(1.0 / resolution)) + 1)
    counts, edges = np.histogram(residual, bins)
    return counts, edges


def estimate_tuning(S, sr, bins_per_octave):
    """(tuning, residuals, counts, edges) of librosa.estimate_tuning(S=S)."""
    pitch, mag = piptrack(S, sr)
    mask = pitch > 0
    threshold = np.median(mag[mask]) if mask.any() else 0.0
    residual = tuning_residuals(pitch[(mag >= threshold) & mask], bins_per_octave)
    counts, edges = histogram(residual)
    if residual.size == 0:
        return 0.0, residual, counts, edges
    return float(edges[np.argmax(counts)]), residual, counts, edges


def filters_chroma(sr, n_fft, n_chroma, tuning, ctroct=5.0, octwidth=2.0):
    """librosa.filters.chroma(norm=2, base_c=True), float32 [n_chroma][1 + n_fft//2]."""
    frequencies = np.linspace(0, sr, n_fft, endpoint=False)[1:]
    a440 = 440.0 * 2.0 ** (tuning / n_chroma)
    frqbins = n_chroma * np.log2(frequencies / (a440 / 16))
    frqbins = np.concatenate(([frqbins[0] - 1.5 * n_chroma], frqbins))
    binwidth = np.concatenate((np.maximum(frqbins[1:] - frqbins[:-1], 1.0), [1]))
    D = np.subtract.outer(frqbins, np.arange(0, n_chroma, dtype="d")).T
    half = np.round(float(n_chroma) / 2)
    D = np.remainder(D + half + 10 * n_chroma, n_chroma) - half
    wts = np.exp(-0.5 * (2 * D / np.tile(binwidth, (n_chroma, 1))) ** 2)
    wts = wts / np.sum(np.abs(wts) ** 2, axis=0, keepdims=True) ** 0.5
    wts *= np.tile(np.exp(-0.5 * (((frqbins / n_chroma - ctroct) / octwidth) ** 2)), (n_chroma, 1))
    wts = np.roll(wts, -3 * (n_chroma // 12), axis=0)
    return np.ascontiguousarray(wts[:, : int(1 + n_fft / 2)], dtype=F32)


def normalize_max(C):
    """util.normalize(norm=inf, axis=0): each frame over its largest |value|,
    frames below float32's tiny left as they are."""
    length = np.max(np.abs(C).astype(float), axis=0, keepdims=True)
    length[length < np.finfo(F32).tiny] = 1.0
    out = np.empty_like(C)
    out[:] = C / length
    return out


def chroma_stft(y, sr=24000, n_fft=1920, hop=480, n_chroma=24, tuning=None):
    """(chroma [n_chroma][frames] float32, tuning, tuning details)."""
    S = stft_power(y, n_fft, hop)
    details = None
    if tuning is None:
        tuning, *details = estimate_tuning(S, sr, n_chroma)
    fb = filters_chroma(sr, n_fft, n_chroma, tuning)
    raw = np.einsum("cf,ft->ct", fb, S, optimize=True)
    return normalize_max(raw), tuning, details


def vevo2_chroma(y, T, **kw):
    """Vevo2's chroma input: [T][n_chroma], the first T frames."""
    C, tuning, details = chroma_stft(y, **kw)
    return C.T[:T], tuning, details
