"""The Python package (python/audioc) over the build's libaudioc.so: every
call on the bundled models and a tiny Vevo2 package gives the CLI's answer
for the same input; numpy arrays of every documented dtype and shape give
the file's answer; bad inputs raise clear exceptions; two threads share a
model; callbacks, a cancel Event, Ctrl-C and leaving an iterator stop a
call; and pip installs the package offline into a folder it imports from."""
import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
from scipy.io import wavfile

import testenv
from testenv import AUDIOC, BUNDLED_MODEL, PY, ROOT, work

PACKAGE = os.path.join(ROOT, "python")
VAD_MODEL = os.path.join(ROOT, "models", "silero-vad")
SAMPLE = os.path.join(ROOT, "samples", "da_04_sentence.flac")
SAMPLES = [os.path.join(ROOT, "samples", f) for f in ("da_01_time.flac", "da_02_date.flac", "da_04_sentence.flac")]

if testenv.SANITIZED:   # a sanitized library cannot load into a plain python
    pytest.skip("the Python package needs an unsanitized libaudioc.so", allow_module_level=True)
os.environ["AUDIOC_LIBRARY"] = testenv.AUDIOC_SHARED
sys.path.insert(0, PACKAGE)
import audioc  # noqa: E402


def cli(*args):
    p = subprocess.run([AUDIOC, *map(str, args)], capture_output=True, text=True)
    assert p.returncode == 0, f"audioc {' '.join(map(str, args))}: {p.stderr.strip()[-400:]}"
    return p.stdout


@pytest.fixture(scope="module")
def asr():
    with audioc.Model(BUNDLED_MODEL) as m:
        yield m


@pytest.fixture(scope="module")
def vad():
    with audioc.Model(VAD_MODEL) as m:
        yield m


def test_version_and_model():
    """__version__ is the loaded library's, as the CLI's; a model tells its family and task."""
    assert cli("--version").split()[-1] == audioc.__version__, "__version__ from ac_version"
    with audioc.Model(BUNDLED_MODEL, threads=2) as m:
        assert (m.family, m.task) == ("hviske_asr", "transcription")
    with audioc.Model(VAD_MODEL) as m:
        assert (m.family, m.task) == ("silero_vad", "vad")
    assert "word_timestamps" in audioc.Model.transcribe.__doc__ and "rate=" in audioc.Model.transcribe.__doc__, (
        "help(audioc.Model.transcribe) tells the options")


@pytest.mark.parametrize("sample", SAMPLES, ids=os.path.basename)
def test_transcribe_as_cli(asr, vad, sample):
    """Text, segments and words as `audioc transcribe -f json --word-timestamps`, with the bundled VAD (the CLI's
    default) and without one (--no-vad)."""
    for options, args in (({"vad": vad}, []), ({}, ["--no-vad"])):
        want = json.loads(cli("transcribe", "-f", "json", "--word-timestamps", *args, sample))
        got = asr.transcribe(sample, word_timestamps=True, **options)
        assert got.text == want["text"], f"{args}: text"
        assert [(round(s.start, 3), round(s.end, 3), s.text) for s in got.segments] == [
            (s["start"], s["end"], s["text"]) for s in want["segments"]], f"{args}: segments"
        assert [(round(w.start, 3), round(w.end, 3), w.text) for w in got.words] == [
            (w["start"], w["end"], w["word"]) for w in want["words"]], f"{args}: words"
        assert abs(got.duration - want["duration"]) < 1e-3 and got.timings["decode_steps"] > 0


def test_transcribe_iter(asr, vad):
    """The iterator yields the segments transcribe returns, as they finish."""
    whole = asr.transcribe(SAMPLE, vad=vad)
    got = list(asr.transcribe_iter(SAMPLE, vad=vad))
    assert [(s.start, s.end, s.text, s.tokens) for s in got] == [(s.start, s.end, s.text, s.tokens)
                                                                  for s in whole.segments]


def test_vad_as_cli(vad):
    """Speech segments as `audioc vad`; probabilities as --probs."""
    want = [tuple(map(float, line.split())) for line in cli("vad", SAMPLE).splitlines()]
    got = vad.vad(SAMPLE, probs=True)
    assert [(round(s.start, 3), round(s.end, 3)) for s in got.segments] == want and want
    assert got.probs.dtype == np.float32 and len(got.probs) == int(np.ceil(got.duration / got.hop_seconds))


def test_load_audio_as_cli():
    """load_audio gives the samples `audioc convert` writes, at a given rate and at the file's own; from a
    path and from the file's bytes."""
    folder = work("python")
    for rate in (16000, None):
        out = os.path.join(folder, f"convert_{rate}.wav")
        cli("convert", *(["--rate", rate] if rate else []), SAMPLE, out)
        want_rate, want = wavfile.read(out)
        got = audioc.load_audio(SAMPLE, rate=rate)
        assert got.rate == want_rate and got.samples.dtype == np.float32 and np.array_equal(got.samples, want)
        with open(SAMPLE, "rb") as f:
            assert np.array_equal(audioc.load_audio(f.read(), rate=rate).samples, want), "from bytes"


def test_inputs_agree(asr, vad):
    """A path, the file's bytes, an Audio, and numpy arrays of every documented dtype and shape (float32,
    float64, int16, int32; (frames,) and (frames, channels); any rate) give the same answer."""
    want = asr.transcribe(SAMPLE).text
    x = audioc.load_audio(SAMPLE, rate=16000)
    with open(SAMPLE, "rb") as f:
        data = f.read()
    stereo = np.stack([x.samples, x.samples], axis=1)
    inputs = {
        "bytes": (data, None), "Audio": (x, None), "float32": (x.samples, 16000),
        "float64": (x.samples.astype(np.float64), 16000), "int16": ((x.samples * 32767).astype(np.int16), 16000),
        "int32": ((x.samples * 2147483647).astype(np.int32), 16000), "stereo": (stereo, 16000),
        "strided": (stereo[:, 0], 16000), "44.1 kHz": (audioc.load_audio(SAMPLE, rate=44100).samples, 44100),
    }
    for name, (audio, rate) in inputs.items():
        assert asr.transcribe(audio, rate=rate).text == want, name
    segs = vad.vad(SAMPLE).segments
    assert [(s.start_sample, s.end_sample) for s in vad.vad(x).segments] == [(s.start_sample, s.end_sample)
                                                                            for s in segs], "vad of an Audio"


def test_bad_inputs(asr, vad):
    """Bad inputs raise exceptions that say what is wrong."""
    x = audioc.load_audio(SAMPLE, rate=16000).samples
    cases = [
        (lambda: asr.transcribe(x.astype(np.complex64), rate=16000), TypeError, "complex64"),
        (lambda: asr.transcribe(x > 0, rate=16000), TypeError, "bool"),
        (lambda: asr.transcribe(x), TypeError, "rate="),
        (lambda: asr.transcribe(np.where(np.arange(len(x)) == 100, np.nan, x), rate=16000), ValueError,
         "not finite"),
        (lambda: asr.transcribe(np.zeros(0, np.float32), rate=16000), ValueError, "empty"),
        (lambda: asr.transcribe(x.reshape(1, 1, -1), rate=16000), ValueError, "shape"),
        (lambda: asr.transcribe(x, rate=-5), ValueError, "rate"),
        (lambda: asr.transcribe("/nonexistent/speech.wav"), audioc.AudioIOError, "/nonexistent/speech.wav"),
        (lambda: asr.transcribe(b"not audio at all" * 10), audioc.FormatError, ""),
        (lambda: asr.transcribe(SAMPLE, language="xx"), audioc.ArgumentError, "xx"),
        (lambda: asr.transcribe(SAMPLE, beam_size=1000), audioc.ArgumentError, "beam"),
        (lambda: asr.transcribe(12), TypeError, "int"),
        (lambda: vad.transcribe(SAMPLE), audioc.AudiocError, "vad"),
        (lambda: vad.vad(SAMPLE, threshold=2.0), audioc.ArgumentError, "threshold"),
        (lambda: audioc.Model("/nonexistent/model"), audioc.AudiocError, "/nonexistent/model"),
        (lambda: audioc.Model(BUNDLED_MODEL, weights="f13"), audioc.ArgumentError, "f13"),
        (lambda: audioc.load_audio("/nonexistent/a.flac"), audioc.AudioIOError, "/nonexistent/a.flac"),
    ]
    for call, kind, needle in cases:
        with pytest.raises(kind) as e:
            call()
        assert needle.lower() in str(e.value).lower(), f"{kind.__name__}: {e.value} (wants {needle!r})"
    m = audioc.Model(VAD_MODEL)
    m.close()
    with pytest.raises(ValueError, match="closed"):
        m.vad(SAMPLE)
    m.close()   # twice is fine


def test_two_threads_one_model(asr):
    """Two threads transcribe on one model at once (the GIL is released during calls) and get the answers
    one thread gets."""
    want = {s: asr.transcribe(s).text for s in SAMPLES}
    got, errors = {}, []

    def run(order):
        try:
            for _ in range(2):
                for s in order:
                    text = asr.transcribe(s).text
                    got.setdefault(s, set()).add(text)
        except Exception as e:   # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=run, args=(o,)) for o in (SAMPLES, SAMPLES[::-1])]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and got == {s: {t} for s, t in want.items()}, f"{errors} {got}"


LONG_SECONDS = 600


def long_noise():
    return (np.random.default_rng(1).standard_normal(LONG_SECONDS * 16000) * 0.05).astype(np.float32)


def test_cancel(asr, vad):
    """A cancel Event set from another thread, an exception from a callback, Ctrl-C during a call on the main
    thread, and leaving an iterator early each stop the call."""
    noise = long_noise()
    t0 = time.monotonic()
    vad.vad(noise[: 60 * 16000], rate=16000)
    minute = time.monotonic() - t0

    stop = threading.Event()
    threading.Timer(0.05, stop.set).start()
    t0 = time.monotonic()
    with pytest.raises(audioc.Cancelled, match="stopped by the caller"):
        vad.vad(noise, rate=16000, cancel=stop)
    assert time.monotonic() - t0 < 3 * minute + 1, "a cancel Event stops the VAD"

    seen = []

    def progress(done, total):
        seen.append((done, total))
        if done > 30:
            raise RuntimeError("enough")
    with pytest.raises(RuntimeError, match="enough"):
        vad.vad(noise, rate=16000, progress=progress)
    assert seen[-1][0] > 30 and seen[-1][0] < 60 and seen[-1][1] == LONG_SECONDS, "progress in seconds"

    t0 = time.monotonic()
    threading.Timer(0.05, os.kill, (os.getpid(), signal.SIGINT)).start()
    with pytest.raises(KeyboardInterrupt):
        vad.vad(noise, rate=16000)
    assert time.monotonic() - t0 < 3 * minute + 1, "Ctrl-C stops the VAD"

    with pytest.raises(RuntimeError, match="stop here"):
        asr.transcribe(SAMPLE, on_segment=lambda s: (_ for _ in ()).throw(RuntimeError("stop here")))
    it = asr.transcribe_iter(np.concatenate([audioc.load_audio(SAMPLE, rate=16000).samples] * 30), rate=16000)
    first = next(it)
    it.close()   # cancels the rest; returns once the call has ended
    assert first.text and threading.active_count() < 10


@pytest.fixture(scope="module")
def voice_model(vevo2_package):
    with audioc.Model(vevo2_package("F32", 11)) as m:
        yield m


VOICE = os.path.join(ROOT, "samples", "da_04_sentence.flac")
GREEDY = dict(steps=4, max_new_tokens=30, temperature=0)


def cli_wav(*args):
    out = os.path.join(work("python"), "voice.wav")
    cli(*args, "--temperature", 0, "--max-tokens", 30, "--steps", 4, "--float", "--no-progress", "-o", out)
    rate, x = wavfile.read(out)
    return rate, x


def test_speak_and_convert_as_cli(voice_model):
    """speak and convert give `audioc tts` and `audioc vc`'s audio (greedy); the iterator yields the same
    samples; progress hears the stages; a Vevo2 model is a voice model."""
    m = voice_model
    assert (m.family, m.task) == ("vevo2", "voice")
    rate, want = cli_wav("tts", "-m", m.path, "--voice", VOICE, "Hello there.")
    stages = set()
    got = m.speak("Hello there.", voice=VOICE, progress=lambda s, d, t: stages.add(s), **GREEDY)
    assert got.rate == rate == 24000 and got.samples.dtype == np.float32
    assert np.array_equal(got.samples, want), "speak as audioc tts"
    assert {"ar", "fm"} <= stages, f"progress stages {stages}"
    chunks = list(m.speak_iter("Hello there.", voice=VOICE, **GREEDY))
    assert np.array_equal(np.concatenate(chunks), want), "speak_iter's chunks"
    voice = audioc.load_audio(VOICE, rate=24000)
    assert np.array_equal(m.speak("Hello there.", voice=voice, **GREEDY).samples, want), "a voice as an array"
    rate, want = cli_wav("vc", "-m", m.path, "--target-voice", VOICE, SAMPLES[0])
    got = m.convert(SAMPLES[0], target_voice=VOICE, **GREEDY)
    assert got.rate == rate and np.array_equal(got.samples, want), "convert as audioc vc"
    with pytest.raises(audioc.ArgumentError, match="route"):
        m.speak("Hello.", voice=VOICE, route="no_such_route")
    with pytest.raises(TypeError, match="unknown option"):
        m.speak("Hello.", voice=VOICE, stepz=3)
    with pytest.raises(audioc.Cancelled):
        m.speak("Hello there.", voice=VOICE, cancel=_set_event(), **GREEDY)


def _set_event():
    e = threading.Event()
    e.set()
    return e


def test_warnings_reach_logging(voice_model, caplog):
    """The library's warnings go to the "audioc" logger (ac_set_log_callback), not stderr."""
    with caplog.at_level(logging.WARNING, logger="audioc"):
        voice_model.speak("Hello.", voice=VOICE, style_ref=SAMPLES[0], route="zero_shot_tts", **GREEDY)
    assert any(r.name == "audioc" and "transcript" in r.getMessage() for r in caplog.records), (
        f"the warning in logging: {[r.getMessage() for r in caplog.records]}")


def test_pip_install_offline():
    """pip installs the package offline (no build isolation, no index) into a folder; a fresh python imports it
    from there and finds the library through AUDIOC_LIBRARY, or says clearly that it found none."""
    folder = work("python_install")   # kept: other tests list the work folder while this one runs
    src, target = os.path.join(folder, "src"), os.path.join(folder, "site")
    for d in (src, target):
        shutil.rmtree(d, ignore_errors=True)
    shutil.copytree(PACKAGE, src)   # pip builds in the tree it is given: a copy keeps the checkout clean
    p = subprocess.run([PY, "-m", "pip", "install", "--no-build-isolation", "--no-index", "--no-deps", "--target",
                        target, src], capture_output=True, text=True)
    assert p.returncode == 0, f"pip install: {p.stderr.strip()[-800:]}"
    code = "import audioc, sys; print(audioc.__version__, audioc.__file__)"
    env = dict(os.environ, PYTHONPATH=target)
    p = subprocess.run([PY, "-c", code], capture_output=True, text=True, env=env, cwd=folder)
    assert p.returncode == 0 and p.stdout.split()[0] == audioc.__version__, p.stderr[-500:]
    assert p.stdout.split()[1].startswith(target), "imported from the installed copy"
    env = dict(env, AUDIOC_LIBRARY=os.path.join(folder, "missing", "libaudioc.so"))
    p = subprocess.run([PY, "-c", code], capture_output=True, text=True, env=env, cwd=folder)
    assert p.returncode != 0 and "LibraryNotFound" in p.stderr and "AUDIOC_LIBRARY" in p.stderr, p.stderr[-500:]
