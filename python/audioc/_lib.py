"""Finding and loading libaudioc.so, the C structs of audioc.h as ctypes
structures, the function signatures, and the library's errors as exceptions.

ctypes releases the GIL during every call into the library, so Python
threads run calls on one model at once, as audioc.h's threading contract
allows."""
from __future__ import annotations

import ctypes
import ctypes.util
import logging
import os
import subprocess
import threading
from typing import Optional

c_int, c_float, c_double, c_size_t = ctypes.c_int, ctypes.c_float, ctypes.c_double, ctypes.c_size_t
c_int64, c_uint64, c_char_p, c_void_p = ctypes.c_int64, ctypes.c_uint64, ctypes.c_char_p, ctypes.c_void_p
P = ctypes.POINTER


# ---- errors -----------------------------------------------------------------

class AudiocError(Exception):
    """A call into audio.c failed; the message is the library's (ac_last_error)."""

    status = "error"


class ArgumentError(AudiocError, ValueError):
    """A bad argument or option value (AC_ERR_ARG)."""

    status = "arg"


class AudioIOError(AudiocError, OSError):
    """A file could not be opened, read or written (AC_ERR_IO)."""

    status = "io"


class FormatError(AudiocError, ValueError):
    """Input bytes are not what they claim to be (AC_ERR_FORMAT)."""

    status = "format"


class ModelError(AudiocError):
    """Weights or configuration do not fit the model (AC_ERR_MODEL)."""

    status = "model"


class UnsupportedError(AudiocError):
    """Valid input that audio.c does not handle (AC_ERR_UNSUPPORTED)."""

    status = "unsupported"


class Cancelled(AudiocError):
    """The call was cancelled (AC_ERR_CANCELLED)."""

    status = "cancelled"


class LibraryNotFound(ImportError):
    """libaudioc.so was found nowhere this package looks."""


_ERRORS = {c.status: c for c in (ArgumentError, AudioIOError, FormatError, ModelError, UnsupportedError, Cancelled)}


# ---- structs (audioc.h) -----------------------------------------------------

class AudioInput(ctypes.Structure):
    _fields_ = [("struct_size", c_size_t), ("kind", c_int), ("path", c_char_p), ("pcm", P(c_float)),
                ("frames", c_int64), ("channels", c_int), ("sample_rate", c_int), ("data", c_void_p),
                ("size", c_size_t), ("name", c_char_p)]


class AudioInfo(ctypes.Structure):
    _fields_ = [("sample_rate", c_int), ("channels", c_int), ("frames", c_int64), ("format", ctypes.c_char * 32)]


VAD_PROGRESS = ctypes.CFUNCTYPE(c_int, c_double, c_double, c_void_p)


class VadOptions(ctypes.Structure):
    _fields_ = [("struct_size", c_size_t), ("threshold", c_float), ("neg_threshold", c_float),
                ("min_speech_ms", c_int), ("min_silence_ms", c_int), ("speech_pad_ms", c_int),
                ("max_speech_s", c_double), ("min_silence_at_max_speech_ms", c_int),
                ("use_max_poss_sil_at_max_speech", c_int), ("keep_probs", c_int), ("on_progress", VAD_PROGRESS),
                ("user", c_void_p)]


class VadSegment(ctypes.Structure):
    _fields_ = [("start", c_int64), ("end", c_int64), ("confidence", c_float)]


class VadResult(ctypes.Structure):
    _fields_ = [("struct_size", c_size_t), ("segments", P(VadSegment)), ("n_segments", c_size_t),
                ("probs", P(c_float)), ("n_probs", c_size_t), ("hop_seconds", c_double), ("sample_rate", c_int),
                ("channels", c_int), ("n_samples", c_int64), ("speech", P(VadSegment))]


class AsrSegment(ctypes.Structure):
    _fields_ = [("start", c_double), ("end", c_double), ("text", c_char_p), ("tokens", P(c_int)),
                ("n_tokens", c_int), ("avg_logprob", c_double)]


ON_SEGMENT = ctypes.CFUNCTYPE(c_int, P(AsrSegment), c_void_p)


class AsrOptions(ctypes.Structure):
    _fields_ = [("struct_size", c_size_t), ("language", c_char_p), ("punctuation", c_int), ("beam_size", c_int),
                ("length_penalty", c_float), ("temperature", c_float), ("top_k", c_int), ("top_p", c_float),
                ("seed", c_uint64), ("max_new_tokens", c_int), ("min_new_tokens", c_int), ("prompt_prefix", c_int),
                ("vad", c_void_p), ("vad_options", P(VadOptions)), ("on_segment", ON_SEGMENT), ("user", c_void_p),
                ("word_timestamps", c_int)]


class AsrWord(ctypes.Structure):
    _fields_ = [("start", c_double), ("end", c_double), ("text", c_char_p), ("segment", c_size_t)]


class AsrTimings(ctypes.Structure):
    _fields_ = [("struct_size", c_size_t), ("frontend", c_double), ("encoder", c_double), ("prefill", c_double),
                ("decode", c_double), ("decode_steps", c_int)]


class AsrResult(ctypes.Structure):
    _fields_ = [("struct_size", c_size_t), ("text", c_char_p), ("segments", P(AsrSegment)), ("n_segments", c_size_t),
                ("duration", c_double), ("timings", P(AsrTimings)), ("words", P(AsrWord)), ("n_words", c_size_t)]


VOICE_PROGRESS = ctypes.CFUNCTYPE(c_int, c_char_p, c_int, c_int, c_void_p)
ON_AUDIO = ctypes.CFUNCTYPE(c_int, P(c_float), c_int64, c_int, c_int, c_void_p)


class VoiceOptions(ctypes.Structure):
    _fields_ = [("struct_size", c_size_t), ("target_voice", P(AudioInput)), ("pitch_mode", c_int),
                ("pitch_shift", c_int), ("steps", c_int), ("seed", c_uint64), ("noise", P(c_float)),
                ("n_noise", c_size_t), ("on_progress", VOICE_PROGRESS), ("user", c_void_p), ("route", c_char_p),
                ("text", c_char_p), ("style_ref", P(AudioInput)), ("style_text", c_char_p),
                ("target_voice_text", c_char_p), ("source_text", c_char_p), ("prosody_ref", P(AudioInput)),
                ("target_duration", c_double), ("reference_duration", c_double), ("use_prosody_code", c_int),
                ("use_pitch_shift", c_int), ("style_pitch_shift", c_int), ("temperature", c_float), ("top_k", c_int),
                ("top_p", c_float), ("repetition_penalty", c_float), ("min_new_tokens", c_int),
                ("max_new_tokens", c_int), ("on_audio", ON_AUDIO), ("speed", c_double)]


class VoiceResult(ctypes.Structure):
    # timings: an ac_voice_timings the package does not read (no mirror to keep in step)
    _fields_ = [("struct_size", c_size_t), ("samples", P(c_float)), ("n_samples", c_int64), ("sample_rate", c_int),
                ("pitch_shift", c_int), ("timings", c_void_p), ("style_pitch_shift", c_int)]


class LoadOptions(ctypes.Structure):
    _fields_ = [("struct_size", c_size_t), ("whisper", c_char_p), ("weights", c_int)]


LOG_FN = ctypes.CFUNCTYPE(None, c_int, c_char_p, c_void_p)

# name: (restype, argtypes)
_SIGNATURES = {
    "ac_version": (c_char_p, [P(c_int), P(c_int), P(c_int)]),
    "ac_last_error": (c_char_p, []),
    "ac_status_name": (c_char_p, [c_int]),
    "ac_set_threads": (c_int, [c_int]),
    "ac_get_threads": (c_int, []),
    "ac_set_progress": (None, [c_int]),
    "ac_set_log_callback": (None, [LOG_FN, c_void_p]),
    "ac_free": (None, [c_void_p]),
    "ac_input_file_init": (None, [P(AudioInput), c_size_t, c_char_p]),
    "ac_input_pcm_init": (None, [P(AudioInput), c_size_t, P(c_float), c_int64, c_int, c_int]),
    "ac_input_memory_init": (None, [P(AudioInput), c_size_t, c_void_p, c_size_t, c_char_p]),
    "ac_audio_decode": (c_int, [P(AudioInput), c_int, P(P(c_float)), P(c_int64), P(AudioInfo)]),
    "ac_load_options_init": (None, [P(LoadOptions), c_size_t]),
    "ac_weight_type_parse": (c_int, [c_char_p, P(c_int)]),
    "ac_model_load_with": (c_int, [c_char_p, c_char_p, P(LoadOptions), P(c_void_p)]),
    "ac_model_family": (c_char_p, [c_void_p]),
    "ac_model_task": (c_int, [c_void_p]),
    "ac_task_name": (c_char_p, [c_int]),
    "ac_model_free": (None, [c_void_p]),
    "ac_vad_options_init": (None, [P(VadOptions), c_size_t]),
    "ac_asr_vad_options_init": (None, [P(VadOptions), c_size_t]),
    "ac_vad_run": (c_int, [c_void_p, P(AudioInput), P(VadOptions), P(P(VadResult))]),
    "ac_vad_result_free": (None, [P(VadResult)]),
    "ac_asr_options_init": (None, [P(AsrOptions), c_size_t]),
    "ac_asr_transcribe": (c_int, [c_void_p, P(AudioInput), P(AsrOptions), P(P(AsrResult))]),
    "ac_asr_result_free": (None, [P(AsrResult)]),
    "ac_voice_options_init": (None, [P(VoiceOptions), c_size_t]),
    "ac_voice_convert": (c_int, [c_void_p, P(AudioInput), P(VoiceOptions), P(P(VoiceResult))]),
    "ac_voice_speak": (c_int, [c_void_p, c_char_p, P(VoiceOptions), P(P(VoiceResult))]),
    "ac_voice_result_free": (None, [P(VoiceResult)]),
}


# ---- finding the library ----------------------------------------------------

_explicit: Optional[str] = None
_lib: Optional[ctypes.CDLL] = None
_lock = threading.Lock()
_log = logging.getLogger("audioc")


def use_library(path: str) -> None:
    """Loads libaudioc from PATH instead of searching for it; call before the first use of the package."""
    global _explicit
    with _lock:
        if _lib is not None:
            raise RuntimeError(f"audioc: the library is already loaded ({_lib._name}); use_library comes first")
        _explicit = os.fspath(path)


def _candidates() -> list:
    """Where the library is looked for, in order, as (how, path)."""
    found = []
    if _explicit:
        return [("use_library()", _explicit)]
    if os.environ.get("AUDIOC_LIBRARY"):
        return [("AUDIOC_LIBRARY", os.environ["AUDIOC_LIBRARY"])]
    try:
        libdir = subprocess.run(["pkg-config", "--variable=libdir", "audioc"], capture_output=True, text=True,
                                timeout=10)
        if libdir.returncode == 0 and libdir.stdout.strip():
            found.append(("pkg-config audioc", os.path.join(libdir.stdout.strip(), "libaudioc.so")))
    except (OSError, subprocess.SubprocessError):
        pass
    found.append(("the library path", ctypes.util.find_library("audioc") or "libaudioc.so.0"))
    return found


def _bind(lib: ctypes.CDLL) -> None:
    for name, (restype, argtypes) in _SIGNATURES.items():
        f = getattr(lib, name)
        f.restype, f.argtypes = restype, argtypes


@LOG_FN
def _to_logging(level: int, message: bytes, user) -> None:
    """The library's log messages into the "audioc" logger (ac_set_log_callback)."""
    _log.log({0: logging.ERROR, 1: logging.WARNING, 2: logging.INFO}.get(level, logging.DEBUG),
             message.decode("utf-8", "replace"))


def lib() -> ctypes.CDLL:
    """The loaded library (found and loaded on first use)."""
    global _lib
    if _lib is not None:
        return _lib
    with _lock:
        if _lib is None:
            tried = []
            for how, path in _candidates():
                try:
                    candidate = ctypes.CDLL(path)
                    _bind(candidate)
                except (OSError, AttributeError) as e:
                    tried.append(f"{how}: {path} ({e})")
                    continue
                candidate.ac_set_log_callback(_to_logging, None)
                candidate.ac_set_progress(0)   # progress reaches Python through callbacks, not stderr
                _lib = candidate
                break
            else:
                raise LibraryNotFound("audioc: libaudioc.so not found; build audio.c (make build) or install it, "
                                      "then pass its path to audioc.use_library(), set AUDIOC_LIBRARY, or make "
                                      "`pkg-config audioc` find it. Tried: " + "; ".join(tried))
    return _lib


def check(status: int) -> None:
    """Raises the exception of STATUS with the library's message (on the calling thread, as it is kept)."""
    if status == 0:
        return
    L = lib()
    name = L.ac_status_name(status).decode()
    message = (L.ac_last_error() or b"").decode("utf-8", "replace") or name
    raise _ERRORS.get(name, AudiocError)(message)


def version() -> str:
    """The version string of the loaded library (ac_version)."""
    return lib().ac_version(None, None, None).decode()
