"""Audio in: file paths, encoded bytes and numpy arrays as the library's
ac_audio_input; audio out as Audio (float32 samples and their rate)."""
from __future__ import annotations

import ctypes
import os
from typing import NamedTuple, Optional, Union

import numpy as np

from . import _lib


class Audio(NamedTuple):
    """Mono float32 samples and their rate: ``samples, rate = model.speak(...)``."""

    samples: np.ndarray
    rate: int


AudioLike = Union[str, "os.PathLike[str]", bytes, np.ndarray, Audio]

# integer PCM as float in [-1, 1)
_SCALE = {np.dtype(np.int16): 1 / 32768, np.dtype(np.int32): 1 / 2147483648}


def _as_pcm(array: np.ndarray, rate: Optional[int]) -> tuple:
    """ARRAY as C-contiguous interleaved float32 frames x channels, and its channel count."""
    if rate is None:
        raise TypeError("audioc: a numpy array needs its sample rate: rate=...")
    if not isinstance(rate, (int, np.integer)) or isinstance(rate, bool) or rate <= 0:
        raise ValueError(f"audioc: rate must be a positive integer (got {rate!r})")
    a = np.asarray(array)
    if a.dtype.kind == "f":
        a = a.astype(np.float32, copy=False)
    elif a.dtype in _SCALE:
        a = a.astype(np.float32) * np.float32(_SCALE[a.dtype])
    else:
        raise TypeError(f"audioc: audio arrays are float32, float64, int16 or int32, not {a.dtype}")
    if a.ndim == 1:
        channels = 1
    elif a.ndim == 2:
        channels = a.shape[1]
    else:
        raise ValueError(f"audioc: audio arrays are (frames,) or (frames, channels), not shape {a.shape}")
    if a.size == 0 or channels == 0:
        raise ValueError(f"audioc: the audio array is empty (shape {a.shape})")
    if not np.isfinite(a).all():
        bad = int(np.argmin(np.isfinite(a).reshape(-1)))
        raise ValueError(f"audioc: the audio array holds a value that is not finite (NaN or inf) at flat index {bad}")
    return np.ascontiguousarray(a), channels


class Input:
    """An ac_audio_input for AUDIO, keeping alive the memory it points to for as long as it lives."""

    def __init__(self, audio: AudioLike, rate: Optional[int] = None):
        L = _lib.lib()
        self.c = _lib.AudioInput()
        size = ctypes.sizeof(self.c)
        if isinstance(audio, Audio):
            audio, rate = audio.samples, audio.rate
        if isinstance(audio, (str, os.PathLike)):
            self.keep = os.fsencode(audio)
            if not self.keep:
                raise ValueError("audioc: an empty file name")
            L.ac_input_file_init(self.c, size, self.keep)
        elif isinstance(audio, (bytes, bytearray, memoryview)):
            self.keep = bytes(audio)
            if not self.keep:
                raise ValueError("audioc: empty audio bytes")
            L.ac_input_memory_init(self.c, size, self.keep, len(self.keep), b"bytes")
        elif isinstance(audio, np.ndarray):
            self.keep, channels = _as_pcm(audio, rate)
            ptr = self.keep.ctypes.data_as(ctypes.POINTER(ctypes.c_float))
            L.ac_input_pcm_init(self.c, size, ptr, self.keep.shape[0], channels, int(rate))
        else:
            raise TypeError(f"audioc: audio is a file path, bytes of an audio file, a numpy array or Audio, "
                            f"not {type(audio).__name__}")

    def ref(self):
        return ctypes.byref(self.c)


def float_array(ptr, n: int) -> np.ndarray:
    """A copy of N floats at PTR."""
    if n <= 0:
        return np.zeros(0, np.float32)
    return np.ctypeslib.as_array(ptr, shape=(int(n),)).copy()


def load_audio(path: AudioLike, rate: Optional[int] = None) -> Audio:
    """Decodes an audio file (any format audio.c reads: WAV, FLAC, MP3, Ogg, Opus, M4A, ...) or its bytes,
    mixed to mono and resampled to RATE (None: the file's own rate), as float32 samples and their rate."""
    L = _lib.lib()
    if rate is not None and (not isinstance(rate, (int, np.integer)) or rate <= 0):
        raise ValueError(f"audioc: rate must be a positive integer (got {rate!r})")
    src = Input(path)
    pcm = ctypes.POINTER(ctypes.c_float)()
    frames = ctypes.c_int64()
    info = _lib.AudioInfo()
    _lib.check(L.ac_audio_decode(src.ref(), int(rate or 0), ctypes.byref(pcm), ctypes.byref(frames),
                                 ctypes.byref(info)))
    try:
        samples = float_array(pcm, frames.value)
    finally:
        L.ac_free(pcm)
    return Audio(samples, int(rate or info.sample_rate))
