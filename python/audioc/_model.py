"""audioc.Model: a loaded model and its calls (transcribe, vad, speak,
convert), with results as dataclasses and numpy arrays."""
from __future__ import annotations

import contextlib
import ctypes
import os
import queue
import signal
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterator, List, Optional, Union

import numpy as np

from . import _lib
from ._audio import Audio, AudioLike, Input, float_array

CANCELLED = 7   # AC_ERR_CANCELLED
PITCH = {"auto": 0, "fixed": 1, "none": 2}   # ac_pitch_mode


@dataclass
class Word:
    """A word and its times in seconds (word_timestamps=True)."""

    start: float
    end: float
    text: str


@dataclass
class Segment:
    """A finished piece of a transcription: times in seconds, its text and tokens; its words when asked for."""

    start: float
    end: float
    text: str
    tokens: List[int]
    avg_logprob: float
    words: List[Word] = field(default_factory=list)


@dataclass
class Transcription:
    """What transcribe returns: the whole text, its segments (with words), the audio's length in seconds and
    the seconds each stage took."""

    text: str
    segments: List[Segment]
    duration: float
    timings: Dict[str, float]

    @property
    def words(self) -> List[Word]:
        return [w for s in self.segments for w in s.words]


@dataclass
class SpeechSegment:
    """Speech the VAD found: seconds, and samples at the input's rate ([start_sample, end_sample))."""

    start: float
    end: float
    start_sample: int
    end_sample: int
    confidence: float


@dataclass
class VadResult:
    """What vad returns: the speech segments, and the speech probability per hop when probs=True."""

    segments: List[SpeechSegment]
    sample_rate: int
    duration: float
    hop_seconds: float
    probs: Optional[np.ndarray] = None


class _Guard:
    """Runs the caller's callbacks inside a call: an exception they raise or a set CANCEL event stops the
    call, and the exception is raised when the call returns. Ctrl-C during a call on the main thread stops
    it too: while the call runs, SIGINT only records a KeyboardInterrupt (a Python frame of a callback could
    not catch it), which the next callback turns into a stop."""

    def __init__(self, cancel: Optional[threading.Event]):
        self.cancel, self.error = cancel, None

    @contextlib.contextmanager
    def calling(self):
        swap = (threading.current_thread() is threading.main_thread()
                and signal.getsignal(signal.SIGINT) is signal.default_int_handler)
        if swap:
            signal.signal(signal.SIGINT, self._interrupt)
        try:
            yield
        finally:
            if swap:
                signal.signal(signal.SIGINT, signal.default_int_handler)

    def _interrupt(self, signum, frame) -> None:
        if self.error is None:
            self.error = KeyboardInterrupt()

    def __call__(self, fn: Optional[Callable], *args) -> int:
        if self.error is not None:
            return 1
        try:
            if fn is not None:
                fn(*args)
        except BaseException as e:   # noqa: B902 - KeyboardInterrupt must stop the call too
            self.error = e
            return 1
        return int(self.cancel is not None and self.cancel.is_set())

    def finish(self, status: int, free: Callable[[], None]) -> None:
        """Raises what stopped the call (FREE frees a result it made all the same), else the status's error."""
        if self.error is not None and status in (0, CANCELLED):
            if status == 0:
                free()
            raise self.error
        _lib.check(status)


def _stream(run: Callable[[Callable[[Any], None], threading.Event], None]) -> Iterator[Any]:
    """Runs RUN(put, stop) on a thread and yields what it puts as it comes; leaving the loop early (or
    Ctrl-C while waiting) sets STOP, which cancels the call, and waits for it to end."""
    q: "queue.Queue" = queue.Queue()
    stop = threading.Event()
    done = object()

    def worker():
        try:
            run(q.put, stop)
            q.put(done)
        except BaseException as e:   # noqa: B902 - handed to the consumer
            q.put(e)

    t = threading.Thread(target=worker, name="audioc-call", daemon=True)
    t.start()
    try:
        while True:
            try:
                item = q.get(timeout=0.1)
            except queue.Empty:
                continue
            if item is done:
                return
            if isinstance(item, BaseException):
                if isinstance(item, _lib.Cancelled) and stop.is_set():
                    return
                raise item
            yield item
    finally:
        stop.set()
        t.join()


def _set(struct, **values) -> None:
    """Sets the fields of VALUES that are not None (None keeps the library's default)."""
    fields = {f[0] for f in struct._fields_}
    for k, v in values.items():
        if k not in fields:
            raise TypeError(f"audioc: unknown option {k}=")
        if v is not None:
            setattr(struct, k, v)


def _encode(text: Optional[str]) -> Optional[bytes]:
    return None if text is None else str(text).encode("utf-8")


class Model:
    """A model loaded by audio.c: speech recognition (Hviske), voice activity detection (Silero, MarbleNet) or
    voice generation (Vevo2). One model may be used by several Python threads at once (the GIL is released
    during calls). Use it as a context manager, or call close().

    path: a package folder, a weights file, a .gguf package, or "hf:ORG/NAME" on the Hugging Face Hub.
    family: the model's family (None: told from its files).
    threads: the size of audio.c's thread pool (process-wide; None keeps it: the physical cores).
    weights: the type the weight matrices are held in: "stored" (default), "f32", "f16", "bf16" or "q8_0".
    whisper: Vevo2's Whisper-medium encoder when it is not in or beside the package."""

    def __init__(self, path: Union[str, "os.PathLike[str]"], *, family: Optional[str] = None,
                 threads: Optional[int] = None, weights: Optional[str] = None,
                 whisper: Optional[Union[str, "os.PathLike[str]"]] = None):
        L = _lib.lib()
        self._handle: Optional[ctypes.c_void_p] = None
        self.path = os.fspath(path)
        if threads is not None:
            _lib.check(L.ac_set_threads(int(threads)))
        opt = _lib.LoadOptions()
        L.ac_load_options_init(opt, ctypes.sizeof(opt))
        if weights is not None:
            w = ctypes.c_int()
            _lib.check(L.ac_weight_type_parse(str(weights).encode(), ctypes.byref(w)))
            opt.weights = w.value
        if whisper is not None:
            self._whisper = os.fsencode(whisper)
            opt.whisper = self._whisper
        h = ctypes.c_void_p()
        _lib.check(L.ac_model_load_with(os.fsencode(path), _encode(family), opt, ctypes.byref(h)))
        self._handle = h
        self._calls = 0
        self._idle = threading.Condition()
        self.family: str = L.ac_model_family(h).decode()
        self.task: str = L.ac_task_name(L.ac_model_task(h)).decode()

    def __repr__(self) -> str:
        state = "closed" if self._handle is None else f"{self.family}, {self.task}"
        return f"audioc.Model({self.path!r}: {state})"

    def __enter__(self) -> "Model":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self):
        if getattr(self, "_handle", None) is not None and _lib._lib is not None:
            _lib._lib.ac_model_free(self._handle)
            self._handle = None

    def close(self) -> None:
        """Frees the model, after the calls running on it end. Calls after it raise ValueError."""
        if getattr(self, "_idle", None) is None:
            return
        with self._idle:
            h, self._handle = self._handle, None
            self._idle.wait_for(lambda: self._calls == 0)
        if h is not None:
            _lib.lib().ac_model_free(h)

    @contextlib.contextmanager
    def _use(self):
        with self._idle:
            if self._handle is None:
                raise ValueError(f"audioc: the model {self.path} is closed")
            self._calls += 1
            h = self._handle
        try:
            yield h
        finally:
            with self._idle:
                self._calls -= 1
                self._idle.notify_all()

    # ---- speech recognition ------------------------------------------------

    def _asr_options(self, kw: Dict[str, Any]):
        L = _lib.lib()
        o = _lib.AsrOptions()
        L.ac_asr_options_init(o, ctypes.sizeof(o))
        keep = [_encode(kw.get("language"))]
        _set(o, language=keep[0], beam_size=kw.get("beam_size"), length_penalty=kw.get("length_penalty"),
             temperature=kw.get("temperature"), top_k=kw.get("top_k"), top_p=kw.get("top_p"), seed=kw.get("seed"),
             max_new_tokens=kw.get("max_new_tokens"), min_new_tokens=kw.get("min_new_tokens"))
        if kw.get("punctuation") is not None:
            o.punctuation = int(bool(kw["punctuation"]))
        o.word_timestamps = int(bool(kw.get("word_timestamps")))
        vad = kw.get("vad")
        if vad is not None:
            if not isinstance(vad, Model):
                vad = Model(vad)
                keep.append(vad)   # loaded for this call, freed with it
            keep.append(vad._use())
            o.vad = keep[-1].__enter__().value
        return o, keep

    @staticmethod
    def _release(keep: list) -> None:
        for k in reversed(keep):
            if isinstance(k, contextlib.AbstractContextManager):
                k.__exit__(None, None, None)
            elif isinstance(k, Model):
                k.close()

    def _transcribe(self, audio: AudioLike, rate: Optional[int], on_segment: Optional[Callable[[Segment], Any]],
                    cancel: Optional[threading.Event], kw: Dict[str, Any]) -> Transcription:
        L = _lib.lib()
        src = Input(audio, rate)
        o, keep = self._asr_options(kw)
        guard = _Guard(cancel)

        def segment(p, user):
            s = p.contents
            return guard(on_segment, Segment(s.start, s.end, s.text.decode("utf-8", "replace"),
                                             [s.tokens[i] for i in range(s.n_tokens)], s.avg_logprob))

        o.on_segment = _lib.ON_SEGMENT(segment)
        res = ctypes.POINTER(_lib.AsrResult)()
        try:
            with self._use() as h, guard.calling():
                status = L.ac_asr_transcribe(h, src.ref(), o, ctypes.byref(res))
        finally:
            self._release(keep)
        guard.finish(status, lambda: L.ac_asr_result_free(res))
        try:
            return self._transcription(res.contents)
        finally:
            L.ac_asr_result_free(res)

    @staticmethod
    def _transcription(r) -> Transcription:
        if r.struct_size < ctypes.sizeof(_lib.AsrResult):
            raise _lib.AudiocError(f"audioc: the library's ac_asr_result is older ({r.struct_size} bytes) than "
                                   f"this package's ({ctypes.sizeof(_lib.AsrResult)})")
        segs = [Segment(s.start, s.end, s.text.decode("utf-8", "replace"), [s.tokens[i] for i in range(s.n_tokens)],
                        s.avg_logprob) for s in (r.segments[i] for i in range(r.n_segments))]
        for i in range(r.n_words):
            w = r.words[i]
            segs[w.segment].words.append(Word(w.start, w.end, w.text.decode("utf-8", "replace")))
        t = r.timings.contents
        timings = {k: getattr(t, k) for k, _ in _lib.AsrTimings._fields_[1:]}
        return Transcription((r.text or b"").decode("utf-8", "replace"), segs, r.duration, timings)

    def transcribe(self, audio: AudioLike, *, rate: Optional[int] = None, language: str = "da",
                   punctuation: bool = True, word_timestamps: bool = False, vad: Optional[Union["Model", str]] = None,
                   beam_size: Optional[int] = None, length_penalty: Optional[float] = None,
                   temperature: Optional[float] = None, top_k: Optional[int] = None, top_p: Optional[float] = None,
                   seed: Optional[int] = None, max_new_tokens: Optional[int] = None,
                   min_new_tokens: Optional[int] = None, on_segment: Optional[Callable[[Segment], Any]] = None,
                   cancel: Optional[threading.Event] = None) -> Transcription:
        """Transcribes AUDIO with a speech recognition model.

        audio: a file path, the bytes of an audio file, a numpy array (float32, float64, int16 or int32;
            shape (frames,) or (frames, channels), channels mixed to mono) with rate=, or an Audio.
        language: the language spoken ("da"); punctuation: punctuation and casing (True).
        word_timestamps: per-word times in each segment's words (False).
        vad: a VAD Model (or its path) to recognize only the speech it finds, as the CLI does by default
            (None: the whole audio, in chunks).
        beam_size (1: greedy), length_penalty (1.0), temperature (0: greedy; > 0 samples), top_k (50),
            top_p (1.0), seed (0), max_new_tokens (256 per chunk), min_new_tokens (0): decoding; None keeps
            the library's default shown.
        on_segment: called with each Segment as it finishes (progress); an exception it raises stops the
            transcription and is raised here. cancel: a threading.Event that stops it when set (Cancelled).
        Ctrl-C (KeyboardInterrupt) during the call stops it. Errors raise AudiocError subclasses with the
        library's message."""
        kw = dict(language=language, punctuation=punctuation, word_timestamps=word_timestamps, vad=vad,
                  beam_size=beam_size, length_penalty=length_penalty, temperature=temperature, top_k=top_k,
                  top_p=top_p, seed=seed, max_new_tokens=max_new_tokens, min_new_tokens=min_new_tokens)
        return self._transcribe(audio, rate, on_segment, cancel, kw)

    def transcribe_iter(self, audio: AudioLike, *, rate: Optional[int] = None, **options) -> Iterator[Segment]:
        """transcribe as an iterator: yields each Segment as it finishes (its words stay empty: ask
        transcribe for words). Takes transcribe's options; leaving the loop early cancels the rest."""
        for bad in ("on_segment", "cancel"):
            if bad in options:
                raise TypeError(f"transcribe_iter: {bad} is not an option of the iterator form")

        def run(put, stop):
            self._transcribe(audio, rate, put, stop, options)

        return _stream(run)

    # ---- voice activity detection -------------------------------------------

    def vad(self, audio: AudioLike, *, rate: Optional[int] = None, threshold: Optional[float] = None,
            neg_threshold: Optional[float] = None, min_speech_ms: Optional[int] = None,
            min_silence_ms: Optional[int] = None, speech_pad_ms: Optional[int] = None,
            max_speech_s: Optional[float] = None, probs: bool = False,
            progress: Optional[Callable[[float, float], Any]] = None,
            cancel: Optional[threading.Event] = None) -> VadResult:
        """The speech segments of AUDIO (see transcribe for what audio may be) with a VAD model.

        threshold: speech when p >= it (0.5); neg_threshold: silence when p < it (threshold - 0.15);
        min_speech_ms (250), min_silence_ms (100), speech_pad_ms (30), max_speech_s (no split): as Silero's
        get_speech_timestamps; probs: also return the probability per hop.
        progress(done_seconds, total_seconds) is called after each block read (total 0 when unknown); an
        exception it raises, a set cancel Event or Ctrl-C stops the run."""
        L = _lib.lib()
        src = Input(audio, rate)
        o = _lib.VadOptions()
        L.ac_vad_options_init(o, ctypes.sizeof(o))
        _set(o, threshold=threshold, neg_threshold=neg_threshold, min_speech_ms=min_speech_ms,
             min_silence_ms=min_silence_ms, speech_pad_ms=speech_pad_ms, max_speech_s=max_speech_s)
        o.keep_probs = int(bool(probs))
        guard = _Guard(cancel)
        o.on_progress = _lib.VAD_PROGRESS(lambda done, total, user: guard(progress, done, total))
        res = ctypes.POINTER(_lib.VadResult)()
        with self._use() as h, guard.calling():
            status = L.ac_vad_run(h, src.ref(), o, ctypes.byref(res))
        guard.finish(status, lambda: L.ac_vad_result_free(res))
        try:
            r = res.contents
            sr = r.sample_rate
            segs = [SpeechSegment(g.start / sr, g.end / sr, g.start, g.end, g.confidence)
                    for g in (r.segments[i] for i in range(r.n_segments))]
            return VadResult(segs, sr, r.n_samples / sr, r.hop_seconds,
                             float_array(r.probs, r.n_probs) if probs else None)
        finally:
            L.ac_vad_result_free(res)

    # ---- voice ------------------------------------------------------------------

    def _voice(self, source: Optional[AudioLike], text: Optional[str], kw: Dict[str, Any],
               on_chunk: Optional[Callable[[np.ndarray], Any]], progress: Optional[Callable[[str, int, int], Any]],
               cancel: Optional[threading.Event]) -> Audio:
        L = _lib.lib()
        rate = kw.pop("rate", None)
        o = _lib.VoiceOptions()
        L.ac_voice_options_init(o, ctypes.sizeof(o))
        keep = []

        def clip(name, audio):
            if audio is not None:
                keep.append(Input(audio, rate))
                setattr(o, name, ctypes.pointer(keep[-1].c))

        clip("target_voice", kw.pop("target_voice"))
        clip("style_ref", kw.pop("style_ref", None))
        clip("prosody_ref", kw.pop("prosody_ref", None))
        for name in ("route", "text", "style_text", "target_voice_text", "source_text"):
            keep.append(_encode(kw.pop(name, None)))
            setattr(o, name, keep[-1])
        pitch = kw.pop("pitch_shift", None)
        if isinstance(pitch, str):
            if pitch not in ("auto", "none"):
                raise ValueError(f"pitch_shift: semitones, 'auto' or 'none', not {pitch!r}")
            o.pitch_mode = PITCH[pitch]
        elif pitch is not None:
            o.pitch_mode, o.pitch_shift = PITCH["fixed"], int(pitch)
        noise = kw.pop("noise", None)
        if noise is not None:
            keep.append(np.ascontiguousarray(noise, dtype=np.float32))
            o.noise, o.n_noise = keep[-1].ctypes.data_as(ctypes.POINTER(ctypes.c_float)), keep[-1].size
        _set(o, **kw)
        guard = _Guard(cancel)
        o.on_progress = _lib.VOICE_PROGRESS(lambda stage, done, total, user: guard(progress, stage.decode(), done,
                                                                                     total))
        o.on_audio = _lib.ON_AUDIO(lambda p, n, i, n_chunks, user: guard(on_chunk, float_array(p, n)))
        src = Input(source, rate) if source is not None else None
        res = ctypes.POINTER(_lib.VoiceResult)()
        with self._use() as h, guard.calling():
            if src is None:
                status = L.ac_voice_speak(h, _encode(text), o, ctypes.byref(res))
            else:
                status = L.ac_voice_convert(h, src.ref(), o, ctypes.byref(res))
        guard.finish(status, lambda: L.ac_voice_result_free(res))
        try:
            r = res.contents
            return Audio(float_array(r.samples, r.n_samples), r.sample_rate)
        finally:
            L.ac_voice_result_free(res)

    _VOICE_DOC = """
        target_voice / voice: the voice to speak or sing in (a few seconds of it), as audio (see transcribe).
        route: the Vevo2 route (speak: zero_shot_tts; convert: style_preserved_vc; see ac_voice_routes).
        text: what to say or sing; style_ref, style_text, target_voice_text, source_text, prosody_ref:
            the references the route uses (audioc.h's ac_voice_options); rate: of numpy-array references.
        pitch_shift: semitones, "auto" (the route's estimate) or "none".
        steps (32), seed (0), temperature (1.0; 0 greedy), top_k (25), top_p (0.8), max_new_tokens (500),
            min_new_tokens (15), speed (1.0), noise (the flow matching's initial noise): None keeps the
            library's default shown.
        progress(stage, done, total): called between stages, after each AR token ("ar") and flow-matching
            step ("fm"); an exception it raises, a set cancel Event or Ctrl-C stops the call.
        Returns Audio(samples float32 mono, rate)."""

    def speak(self, text: str, *, voice: AudioLike, voice_text: Optional[str] = None,
              progress: Optional[Callable[[str, int, int], Any]] = None, cancel: Optional[threading.Event] = None,
              **options) -> Audio:
        """TEXT said (or sung, by route) in the voice of VOICE with a voice model (Vevo2).
        """
        return self._voice(None, text, dict(options, target_voice=voice, target_voice_text=voice_text), None,
                           progress, cancel)

    def speak_iter(self, text: str, *, voice: AudioLike, voice_text: Optional[str] = None,
                   **options) -> Iterator[np.ndarray]:
        """speak as an iterator: yields the float32 samples of each text chunk (about 20 s of speech) as
        soon as it is made, at the model's rate (24000); leaving the loop early cancels the rest."""
        def run(put, stop):
            self._voice(None, text, dict(options, target_voice=voice, target_voice_text=voice_text), put, None,
                        stop)

        return _stream(run)

    def convert(self, audio: AudioLike, *, target_voice: AudioLike,
                progress: Optional[Callable[[str, int, int], Any]] = None, cancel: Optional[threading.Event] = None,
                **options) -> Audio:
        """AUDIO (speech, singing, humming) said or sung again in TARGET_VOICE with a voice model (Vevo2).
        """
        return self._voice(audio, None, dict(options, target_voice=target_voice), None, progress, cancel)

    def convert_iter(self, audio: AudioLike, *, target_voice: AudioLike, **options) -> Iterator[np.ndarray]:
        """convert as an iterator: yields the float32 samples of each chunk as soon as it is made."""
        def run(put, stop):
            self._voice(audio, None, dict(options, target_voice=target_voice), put, None, stop)

        return _stream(run)

    speak.__doc__ += _VOICE_DOC
    convert.__doc__ += _VOICE_DOC
