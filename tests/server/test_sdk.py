"""audioc-server through the official OpenAI Node SDK (npm `openai`,
installed into tests/node by scripts/setup.sh), as its users call it:
audio.transcriptions.create with streamed (fs.createReadStream: chunked) and
buffered (toFile) uploads, every response_format, language, temperature,
timestamp_granularities, stream: true; models.list and models.retrieve; and
the errors the SDK maps to its exception classes. Expected answers come from
the audioc CLI on the same files, as in test_server.py."""
import pytest

import serverlib as ts
from sdklib import expect_error, sdk, value
from serverlib import SILERO

def transcribe_call(a, name, upload="stream", **params):
    params.setdefault("model", "tiny")
    return {"kind": "transcribe", "file": a.path(name), "filename": name, "upload": upload, "params": params}


def test_formats(srv, assets):
    a = assets
    clip_json = a.asr("clip.wav")
    gap_json = a.asr("gap.wav")
    calls, expect = [], []
    for upload in ("stream", "buffer"):
        for fmt in ("json", "text", "srt", "vtt", "verbose_json"):
            calls.append(transcribe_call(a, "gap.wav", upload, response_format=fmt))
            expect.append((f"{upload} upload, response_format={fmt}", fmt))
    for (what, fmt), res in zip(expect, sdk(srv.port, calls)):
        got = value(res, what)
        if fmt == "json":
            assert got == {"text": gap_json.get("text")}, f"SDK {what}: {got!r} (want the CLI's text)"
        elif fmt == "verbose_json":
            j = got or {}
            assert (j.get("text") == gap_json.get("text") and j.get("language") == "da"
                    and abs(j.get("duration", -9) - gap_json["duration"]) < 2e-3
                    and [s.get("text") for s in j.get("segments", [])] == [s["text"] for s in gap_json["segments"]]), (
                    f"SDK {what}: {str(j)[:300]} (want the CLI's segments)")
        else:
            cli = a.asr_format("gap.wav", fmt)
            assert isinstance(got, str) and got.strip() == cli.strip() and got.strip() != "", (
                    f"SDK {what}: {str(got)[:200]!r} (want audioc --format {fmt}: {cli[:200]!r})")

    # the short fields that were once lost from streamed uploads
    res = sdk(srv.port, [transcribe_call(a, "clip.wav", language="en"),
                         transcribe_call(a, "gap.wav", temperature=0.7),
                         transcribe_call(a, "clip.wav", response_format="verbose_json",
                                         timestamp_granularities=["segment"]),
                         transcribe_call(a, "clip.wav", response_format="verbose_json", temperature=0.7),
                         transcribe_call(a, "clip.wav", model="tiny2"),
                         transcribe_call(a, "clip.wav", response_format="verbose_json",
                                         timestamp_granularities=["word", "segment"])])
    assert (value(res[0], "language=en") or {}).get("text") == a.asr_text("clip.wav", "--language", "en"), (
            f"SDK language=en: {res[0]} (want the CLI's --language en text)")
    assert (value(res[1], "temperature=0.7") or {}).get("text") == a.asr_text("gap.wav", "--temperature", "0.7"), (
            f"SDK temperature=0.7: {res[1]} (want the CLI's --temperature 0.7 text)")
    segs = (value(res[2], "timestamp_granularities=[segment]") or {}).get("segments") or []
    assert ([s.get("text") for s in segs] == [s["text"] for s in clip_json["segments"]]
            and all(isinstance(s.get("start"), (int, float)) and isinstance(s.get("end"), (int, float)) for s in segs)), (
            f"SDK timestamp_granularities=[segment]: segments with times ({segs})")
    segs = (value(res[3], "verbose_json, temperature=0.7") or {}).get("segments") or [{}]
    assert abs(segs[0].get("temperature", -1) - 0.7) < 1e-6, f"SDK verbose_json reports temperature 0.7 ({segs})"
    assert (value(res[4], "model=tiny2") or {}).get("text") == a.asr_text("clip.wav", model=a.tiny2), (
            f"SDK model=tiny2: {res[4]}")
    # the fields OpenAI documents: words (asked for), compression_ratio, no_speech_prob (null: no such token), usage
    v = value(res[2], "timestamp_granularities=[segment]") or {}
    assert "words" not in v, f"SDK: no words unless asked for ({sorted(v)})"
    v = value(res[5], "timestamp_granularities=[word, segment]") or {}
    cli = a.asr("clip.wav", "--word-timestamps")
    words = v.get("words")
    assert (isinstance(words, list) and [w.get("word") for w in words] == [w["word"] for w in cli.get("words", [])]
            and all(w.get("start") <= w.get("end") for w in words)), (
            f"SDK timestamp_granularities=[word]: the CLI's words with times ({words}, want {cli.get('words')})")
    assert " ".join(w.get("word", "") for w in words or []) == v.get("text"), "SDK: the words spell the text"
    dur = v.get("duration", 0)
    assert v.get("usage") == {"type": "duration", "seconds": -(-dur // 1)}, f"SDK usage: {v.get('usage')} ({dur} s)"
    segs = v.get("segments") or [{}]
    assert (all(isinstance(s.get("compression_ratio"), float) and s.get("compression_ratio") > 0 and
                "no_speech_prob" in s and s["no_speech_prob"] is None for s in segs)), (
            f"SDK segments carry compression_ratio and no_speech_prob: {segs}")
    import zlib
    t = segs[0].get("text", "").encode()
    assert abs(segs[0].get("compression_ratio", 0) - len(t) / len(zlib.compress(t))) < 1e-5, (
            f"compression_ratio is openai-whisper's zlib ratio ({segs[0].get('compression_ratio')})")


@pytest.mark.threads
def test_stream(srv, assets):
    a = assets
    gw = a.asr("gap.wav")
    for upload in ("stream", "buffer"):
        res = sdk(srv.port, [transcribe_call(a, "gap.wav", upload, stream=True)])[0]
        events = value(res, f"stream=true ({upload} upload)") or []
        deltas = [e for e in events if e.get("type") == "transcript.text.delta"]
        done = [e for e in events if e.get("type") == "transcript.text.done"]
        assert (len(done) == 1 and done[0].get("text") == gw.get("text") and events[-1] is not None
                and events[-1].get("type") == "transcript.text.done"), (
                f"SDK stream=true ({upload}): ends with one done event with the CLI's text ({events})")
        assert len(deltas) >= 2 and "".join(e.get("delta", "") for e in deltas) == gw.get("text"), (
                f"SDK stream=true ({upload}): deltas, one per segment, join to the text ({deltas})")


@pytest.mark.threads
def test_models(srv, assets):
    res = sdk(srv.port, [{"kind": "models.list"}, {"kind": "models.retrieve", "id": "tiny"},
                         {"kind": "models.retrieve", "id": "silero"}, {"kind": "models.retrieve", "id": "nope"}])
    models = value(res[0], "models.list") or []
    assert ([m.get("id") for m in models] == ["tiny", "tiny2", "silero"]
            and all(m.get("object") == "model" and m.get("owned_by") == "audio.c" for m in models)), (
            f"SDK models.list: {models}")
    m = value(res[1], "models.retrieve('tiny')") or {}
    assert m.get("id") == "tiny" and m.get("object") == "model" and m.get("task") == "transcription", (
            f"SDK models.retrieve('tiny'): {m}")
    m = value(res[2], "models.retrieve('silero')") or {}
    assert m.get("id") == "silero" and m.get("task") == "vad", f"SDK models.retrieve('silero'): {m}"
    e = res[3].get("error") or {}
    assert not res[3]["ok"] and e.get("class") == "NotFoundError" and e.get("status") == 404, (
            f"SDK models.retrieve('nope'): NotFoundError 404 ({res[3]})")


def test_errors(srv, assets):
    a = assets
    res = sdk(srv.port, [transcribe_call(a, "clip.wav", model="nope"),
                         transcribe_call(a, "text.wav"),
                         transcribe_call(a, "clip.wav", language="xx"),
                         transcribe_call(a, "clip.wav", response_format="mp3"),
                         transcribe_call(a, "clip.wav", model="silero")])
    expect_error(res[0], "NotFoundError", 404, "unknown model")
    expect_error(res[1], "BadRequestError", 400, "non-audio bytes")
    expect_error(res[2], "BadRequestError", 400, "language=xx")
    expect_error(res[3], "BadRequestError", 400, "response_format=mp3")
    expect_error(res[4], "NotFoundError", 404, "a VAD model asked to transcribe")
    srv.survived("the SDK's bad requests")


@pytest.mark.threads
def test_auth_and_limits(assets, start_server):
    a = assets
    srv = start_server("sdk_auth", ["--model", f"tiny={a.tiny}", "--api-key", "sekret", "--max-upload-mb", "1",
                              "--threads", "2"])
    if srv.ok:
        res = sdk(srv.port, [{**transcribe_call(a, "clip.wav"), "apiKey": "sekret"},
                             {**transcribe_call(a, "clip.wav"), "apiKey": "wrong"},
                             {"kind": "models.list", "apiKey": "wrong"},
                             {**transcribe_call(a, "long.wav"), "apiKey": "sekret"},
                             {**transcribe_call(a, "long.wav", upload="buffer"), "apiKey": "sekret"}],
                  api_key="sekret")
        assert (value(res[0], "with the right API key") or {}).get("text") == a.asr_text("clip.wav"), (
                f"SDK with the API key: {res[0]}")
        expect_error(res[1], "AuthenticationError", 401, "transcription with a wrong API key")
        expect_error(res[2], "AuthenticationError", 401, "models.list with a wrong API key")
        expect_error(res[3], "APIError", 413, "a streamed upload over --max-upload-mb")
        expect_error(res[4], "APIError", 413, "a buffered upload over --max-upload-mb")
        srv.survived("the SDK's refused requests")
    srv.stop()


srv = ts.module_server("sdk", lambda a: ["--model", f"tiny={a.tiny}", "--model", f"tiny2={a.tiny2}",
                                         "--model", f"silero={SILERO}", "--threads", "2"])
srv.__doc__ = "The server the SDK talks to: two tiny Hviske models and Silero."


@pytest.fixture(autouse=True)
def sdk_installed(node_sdk):
    """Every test here needs the SDK."""
