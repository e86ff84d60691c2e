"""audioc-server as users and OpenAI-style clients use it: start-up flags and
environment, /health, /v1/models, /v1/audio/transcriptions (every response
format, options, VAD, streaming), /v1/audio/vad, CORS, API keys, every kind of
bad request (each a JSON error with the right status, and the server lives
on), upload limits, the bounded queue, clients that hang up, a few requests
with the curl tool (the load test is test_load.py).

Expected texts and segments come from the audioc CLI on the same files: a
tiny random-weight Hviske package (tests/ref/hviske_asr/make_tiny.py with the
real tokenizer) gives arbitrary but deterministic text. Python stdlib only."""
import http.client
import json
import os
import shutil
import socket
import subprocess
import threading
import time

import pytest

import serverlib
import testenv
from serverlib import (ASR_VAD, HTTP_TIMEOUT, SAMPLES, SLOW, START_TIMEOUT, Resp, auth_headers, base_env, check_error, check_stream,
                       check_text, check_verbose, module_server, multipart, raw_exchange, request, transcribe, vad,
                       wait_all)
from testenv import SANITIZED, SILERO, audioc

FLAGS = ("--host", "--port", "--model", "--threads", "--workers", "--max-upload-mb", "--max-queue",
         "--api-key", "--cors", "--help")
ORIGIN = "https://example.com"

srv = module_server("main", lambda a: ["--model", f"silero={SILERO}", "--model", f"tiny={a.tiny}",
                                       "--model", f"tiny2={a.tiny2}", "--workers", "2", "--threads", "1",
                                       "--cors", ORIGIN])
srv.__doc__ = "The main server: Silero and two tiny Hviske models, two workers, CORS for ORIGIN."


@pytest.fixture(autouse=True)
def main_server_lives(request):
    """After each test on the main server, the server is still running."""
    yield
    if "srv" in request.fixturenames:
        s = request.getfixturevalue("srv")
        assert s.alive(), f"[main] the server died during {request.node.name}; stderr: {s.stderr()[-1500:]!r}"


def test_cli(assets):
    p = subprocess.run([testenv.AUDIOC_SERVER, "--help"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, f"--help exits 0 ({p.returncode})"
    for flag in FLAGS:
        assert flag in p.stdout, f"--help documents {flag}"
    p = subprocess.run([testenv.AUDIOC_SERVER, "--bogus-flag"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and p.stderr.strip() != "", (f"unknown flag: exit 2 with a message ({p.returncode}, "
                                                         f"{p.stderr.strip()[:200]!r})")
    broken = os.path.join(serverlib.WORK, "broken_pkg")
    if os.path.exists(broken):
        shutil.rmtree(broken)
    shutil.copytree(assets.tiny, broken)
    os.remove(os.path.join(broken, "model.safetensors"))
    for what, path in (("nonexistent path", os.path.join(serverlib.WORK, "no_such_model_dir")),
                       ("an audio file as a model", assets.path("clip.wav")),
                       ("a package without weights", broken)):
        try:
            p = subprocess.run([testenv.AUDIOC_SERVER, "--host", "127.0.0.1", "--port", "0", "--model", f"x={path}"],
                               capture_output=True, text=True, timeout=START_TIMEOUT, env=base_env())
            rc, out, err = p.returncode, p.stdout, p.stderr
        except subprocess.TimeoutExpired as e:
            rc, out, err = "timeout (kept running)", e.stdout or "", e.stderr or ""
        assert rc == 1 and path in err and "listening" not in str(out), (
                f"model that does not load ({what}): exit 1 naming {path} (got {rc}; {str(err).strip()[:300]!r})")


@pytest.mark.threads
def test_basics(srv):
    r = request(srv.port, "GET", "/health")
    assert r.status == 200 and r.json() == {"status": "ok"}, f"GET /health: {r!r}"
    assert r.header("content-type").startswith("application/json"), f"/health Content-Type {r.header('content-type')!r}"
    r = request(srv.port, "GET", "/v1/models")
    j = r.json() or {}
    assert r.status == 200 and j.get("object") == "list", f"GET /v1/models: {r!r}"
    data = j.get("data") or []
    assert [m.get("id") for m in data] == ["silero", "tiny", "tiny2"], f"models in --model order: {data}"
    fam = {"silero": ("silero_vad", "vad"), "tiny": ("hviske_asr", "transcription"),
           "tiny2": ("hviske_asr", "transcription")}
    for m in data:
        want = fam.get(m.get("id"))
        assert (want is not None and m.get("object") == "model" and m.get("created") == 0
                and m.get("owned_by") == "audio.c" and (m.get("family"), m.get("task")) == want), (
                f"model entry {m}")
    # keep-alive: several requests on one connection
    c = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=HTTP_TIMEOUT)
    rs = [request(srv.port, "GET", "/health", conn=c), request(srv.port, "GET", "/v1/models", conn=c),
          request(srv.port, "GET", "/health", conn=c)]
    c.close()
    assert [x.status for x in rs] == [200, 200, 200], f"keep-alive: three requests on one connection {rs}"
    # the other routes answered on the connection's thread (the ThreadSanitizer build's case of each;
    # test_web.py holds the page's files in full)
    r = request(srv.port, "GET", "/v1/models/tiny2")
    assert r.status == 200 and (r.json() or {}).get("id") == "tiny2" and r.json().get("family") == "hviske_asr", (
            f"GET /v1/models/tiny2: {r!r}")
    for path, ctype in (("/", "text/html"), ("/web/app.js", "text/javascript")):
        r = request(srv.port, "GET", path)
        assert r.status == 200 and r.header("content-type").startswith(ctype) and r.body, f"GET {path}: {r!r}"
    # unknown paths and wrong methods
    for method, path in (("GET", "/nope"), ("GET", "/v1/audio/nope"), ("POST", "/v1/audio/translations"),
                         ("GET", "/v1/models/extra/path")):
        check_error(srv, request(srv.port, method, path), 404, f"{method} {path}")
    for method, path in (("GET", "/v1/audio/transcriptions"), ("GET", "/v1/audio/vad"),
                         ("DELETE", "/v1/audio/transcriptions"), ("POST", "/v1/models")):
        check_error(srv, request(srv.port, method, path), 405, f"{method} {path}")


def test_cors(srv, assets):
    hdr = {"Origin": ORIGIN}
    for what, r in (("GET /health", request(srv.port, "GET", "/health", headers=hdr)),
                    ("GET /v1/models", request(srv.port, "GET", "/v1/models", headers=hdr)),
                    ("POST transcription", transcribe(srv.port, assets.bytes("clip.wav"), extra_headers=hdr)),
                    ("404 error", request(srv.port, "GET", "/nope", headers=hdr))):
        assert r.header("access-control-allow-origin") == ORIGIN, (
                f"CORS: {what} carries Access-Control-Allow-Origin: {ORIGIN} ({r.headers})")
    r = request(srv.port, "OPTIONS", "/v1/audio/transcriptions",
                headers={"Origin": ORIGIN, "Access-Control-Request-Method": "POST",
                         "Access-Control-Request-Headers": "authorization, content-type"})
    assert r.status == 204, f"CORS preflight: OPTIONS answers 204 ({r!r})"
    assert r.header("access-control-allow-origin") == ORIGIN, f"CORS preflight: Allow-Origin ({r.headers})"
    assert "POST" in r.header("access-control-allow-methods").upper(), (
            f"CORS preflight: Allow-Methods has POST ({r.header('access-control-allow-methods')!r})")
    assert "authorization" in r.header("access-control-allow-headers").lower(), (
            f"CORS preflight: Allow-Headers has Authorization ({r.header('access-control-allow-headers')!r})")
    srv.survived("OPTIONS")


def test_json(srv, assets):
    """response_format json (the default): the CLI's text alone, with or without a model field,
    and the OpenAI fields the server accepts without acting on them."""
    port = srv.port
    clip = assets.bytes("clip.wav")
    want = assets.asr("clip.wav")
    assert want.get("text", "").strip() != "", f"CLI transcribes clip.wav: {want}"
    r = transcribe(port, clip, model="tiny")
    check_text(srv, r, want.get("text"), "json (model=tiny)")
    assert r.header("content-type").startswith("application/json"), f"json Content-Type {r.header('content-type')!r}"
    assert set((r.json() or {}).keys()) == {"text"}, f"json: only the text key ({r!r})"
    check_text(srv, transcribe(port, clip), want.get("text"), "no model field: the first ASR model (tiny)")
    assert not r.header("warning"), f"no Warning header when no ignored field is sent ({r.header('warning')!r})"
    r = transcribe(port, clip, response_format="json", language="da", prompt="Hej, et stykke dansk.",
                   temperature="0", timestamp_granularities__=["segment", "word"])
    check_text(srv, r, want.get("text"), "prompt, temperature 0 and timestamp_granularities[] accepted")
    for field in ("prompt", "include[]", "chunking_strategy"):
        r = transcribe(port, clip, **{field.replace("[]", "__"): "auto" if field != "include[]" else ["logprobs"]})
        check_text(srv, r, want.get("text"), f"{field} accepted")
        assert field in (r.header("warning") or "") and "not used" in r.header("warning"), (
                f"{field}: accepted, and the answer's Warning header says it is not used ({r.header('warning')!r})")


def test_text(srv, assets):
    """response_format text: the CLI's text and a newline, as text/plain in UTF-8."""
    r = transcribe(srv.port, assets.bytes("clip.wav"), response_format="text")
    assert r.status == 200 and r.text == assets.asr_text("clip.wav") + "\n", f"text: the text and a newline ({r!r})"
    assert r.header("content-type").replace(" ", "").lower() == "text/plain;charset=utf-8", (
            f"text Content-Type {r.header('content-type')!r}")


@pytest.mark.parametrize("fmt", ["srt", "vtt"])
def test_subtitles(srv, assets, fmt):
    """srt and vtt of several chunks (gap.wav, ~11 s, no VAD) are audioc transcribe --format's."""
    g = assets.bytes("gap.wav")
    gw = assets.asr("gap.wav", "--no-vad")
    assert len(gw.get("segments", [])) >= 3, f"CLI cuts gap.wav into chunks: {len(gw.get('segments', []))}"
    r = transcribe(srv.port, g, response_format=fmt, vad="false")
    cli = assets.asr_format("gap.wav", fmt, "--no-vad")
    assert r.status == 200 and r.text.strip() != "" and r.text.strip() == cli.strip(), (
            f"{fmt}: same as audioc transcribe --format {fmt}: got {r.text[:200]!r}, want {cli[:200]!r}")
    if fmt == "vtt":
        r = transcribe(srv.port, g, response_format="vtt")
        assert r.text.startswith("WEBVTT"), f"vtt starts with WEBVTT ({r.text[:20]!r})"


@pytest.mark.parametrize("name,form,cli", [("gap.wav", {"vad": "false"}, ["--no-vad"]),
                                           ("clip.wav", {"model": "tiny"}, [])])
def test_verbose_json(srv, assets, name, form, cli):
    """verbose_json: the CLI's segments, words and times."""
    r = transcribe(srv.port, assets.bytes(name), response_format="verbose_json", **form)
    check_verbose(srv, r, assets.asr(name, *cli), f"verbose_json ({name})", 0.0)


def test_model_selection(srv, assets):
    """model=tiny2 answers with tiny2's weights, hence another text."""
    w2 = assets.asr_text("clip.wav", model=assets.tiny2)
    assert w2 != assets.asr_text("clip.wav"), "tiny2 says something else than tiny on clip.wav (test sanity)"
    check_text(srv, transcribe(srv.port, assets.bytes("clip.wav"), model="tiny2"), w2, "model=tiny2")


DECODING = [  # what, clip, form fields, the CLI's options
    ("beam_size=2", "gap.wav", {"beam_size": "2"}, ["--beam-size", "2"]),
    ("beam_size=3", "gap.wav", {"beam_size": "3", "temperature": "0"}, ["--beam-size", "3"]),
    ("language=en", "clip.wav", {"language": "en"}, ["--language", "en"]),
    ("temperature=0.7 (sampling, default seed)", "gap.wav", {"temperature": "0.7"}, ["--temperature", "0.7"]),
]


@pytest.mark.parametrize("what,name,form,cli", DECODING, ids=[d[0].split(" ")[0] for d in DECODING])
def test_decoding_options(srv, assets, what, name, form, cli):
    """A decoding option gives the CLI's text with the same option."""
    check_text(srv, transcribe(srv.port, assets.bytes(name), **form), assets.asr_text(name, *cli), what)


def test_sampling_reported(srv, assets):
    """verbose_json reports the temperature a segment was decoded with."""
    r = transcribe(srv.port, assets.bytes("clip.wav"), temperature="0.7", response_format="verbose_json")
    segs = (r.json() or {}).get("segments") or [{}]
    assert r.status == 200 and abs(float(segs[0].get("temperature", -1)) - 0.7) < 1e-6, (
            f"verbose_json reports temperature 0.7 ({r!r})")


@pytest.mark.parametrize("name", ["gap.flac", "gap.mp3", "stereo44k.wav", "gap.m4a", "gap.webm", "gap.aac"])
def test_containers(srv, assets, name):
    """Audio containers and rates: the same samples give the same text as the CLI."""
    check_text(srv, transcribe(srv.port, assets.bytes(name), filename=name), assets.asr_text(name), f"upload {name}")


@pytest.mark.parametrize("name,what", [("gap.flac", "FLAC"), ("gap.m4a", "M4A")])
def test_name_says_nothing(srv, assets, name, what):
    """A file name that says nothing about the content: the bytes decide."""
    check_text(srv, transcribe(srv.port, assets.bytes(name), filename="upload.bin"), assets.asr_text(name),
               f"{what} bytes named upload.bin")


def test_no_samples(srv, assets):
    """No samples at all: an empty transcript like the CLI's, and no segments."""
    check_text(srv, transcribe(srv.port, assets.bytes("empty.wav")), assets.asr_text("empty.wav"), "0-sample WAV")
    r = transcribe(srv.port, assets.bytes("empty.wav"), response_format="verbose_json")
    assert r.status == 200 and (r.json() or {}).get("segments") == [], f"0-sample WAV verbose_json: no segments {r!r}"


@pytest.mark.threads
def test_stream(srv, assets):
    gw = assets.asr("gap.wav")
    r = transcribe(srv.port, assets.bytes("gap.wav"), stream="true")
    check_stream(srv, r, gw.get("text"), len(gw.get("segments", [])), "stream=true (gap.wav)")
    r = transcribe(srv.port, assets.bytes("clip.wav"), stream="true", response_format="json", prompt="Hej.")
    check_stream(srv, r, assets.asr_text("clip.wav"), 1, "stream=true (clip.wav)")
    assert "not used" in r.header("warning"), f"a stream says prompt is not used too ({r.header('warning')!r})"
    check_text(srv, transcribe(srv.port, assets.bytes("clip.wav"), stream="false"), assets.asr_text("clip.wav"),
               "stream=false: a plain JSON answer")
    # nothing to say: only the done event, with an empty text
    r = transcribe(srv.port, assets.bytes("empty.wav"), stream="true")
    check_stream(srv, r, "", 0, "stream=true (0-sample WAV)")
    cli = assets.asr("sil6.wav", "--vad", SILERO)
    r = transcribe(srv.port, assets.bytes("sil6.wav"), stream="true", vad="true")
    check_stream(srv, r, cli.get("text"), len(cli.get("segments", [])), "stream=true, vad=true (only silence)")
    # errors found before any event are plain JSON errors
    check_error(srv, transcribe(srv.port, assets.bytes("clip.wav"), stream="true", language="xx"), 400,
                "stream=true, language=xx")
    check_error(srv, transcribe(srv.port, assets.bytes("text.wav"), stream="true"), 400, "stream=true, non-audio bytes")


def test_vad_transcription(srv, assets):
    cli = assets.asr("gap.wav", "--vad", SILERO)
    assert "text" in cli, f"audioc transcribe --vad works (needed for the comparison): {cli}"
    plain = assets.asr("gap.wav", "--no-vad")
    speech = assets.vad("gap.wav", *ASR_VAD)
    spans = [(s["start"], s["end"]) for s in speech.get("segments", [])]
    assert len(spans) == 2, f"silero finds the two utterances of gap.wav: {spans}"
    r = transcribe(srv.port, assets.bytes("gap.wav"), vad="true", response_format="verbose_json")
    j = r.json() or {}
    assert r.status == 200 and j.get("text") == cli.get("text"), (
            f"vad=true: text equals audioc transcribe --vad ({j.get('text')!r} vs {cli.get('text')!r})")
    segs = j.get("segments") or []
    assert (segs and [(s.get("start"), s.get("end")) for s in segs]
            != [(s["start"], s["end"]) for s in plain.get("segments", [])]), (
            f"vad=true changes the segmentation: {[(s.get('start'), s.get('end')) for s in segs]}")
    inside = all(any(a0 - 0.02 <= s.get("start", -1) and s.get("end", 1e9) <= b0 + 0.02 for a0, b0 in spans)
                 for s in segs)
    assert inside, (f"vad=true: every segment lies within speech {spans}: "
                    f"{[(s.get('start'), s.get('end')) for s in segs]}")
    assert len(segs) == len(cli.get("segments", [])), (
            f"vad=true: as many segments as the CLI ({len(segs)} vs {len(cli.get('segments', []))})")
    check_text(srv, transcribe(srv.port, assets.bytes("gap.wav"), vad="false"), plain.get("text"), "vad=false")
    r = transcribe(srv.port, assets.bytes("gap.wav"), vad="true", stream="true")
    check_stream(srv, r, cli.get("text"), len(cli.get("segments", [])), "vad=true, stream=true")
    # the default when a VAD model is served: the VAD's segments, and silence says nothing
    check_text(srv, transcribe(srv.port, assets.bytes("gap.wav")), cli.get("text"), "no vad field: the VAD is used")
    check_text(srv, transcribe(srv.port, assets.bytes("sil6.wav")), "", "no vad field: silence gives an empty text")


def test_vad_endpoint(srv, assets):
    port = srv.port
    for name, opts, args in (("gap.wav", {}, ()),
                             ("clip.wav", {}, ()),
                             ("stereo44k.wav", {}, ()),
                             ("gap.wav", {"threshold": "0.3", "min_speech_ms": "100", "min_silence_ms": "300",
                                          "speech_pad_ms": "100"},
                              ("--threshold", "0.3", "--min-speech-ms", "100", "--min-silence-ms", "300",
                               "--speech-pad-ms", "100")),
                             ("empty.wav", {}, ())):
        want = assets.vad(name, *args)
        r = vad(port, assets.bytes(name), filename=name, **opts)
        j = r.json() or {}
        what = f"vad {name} {opts}"
        assert r.status == 200 and j.get("model") == "silero" and j.get("family") == "silero_vad", (
                f"{what}: 200, model silero, family silero_vad ({r!r})")
        assert (j.get("sample_rate") == want.get("sample_rate")
                and abs(j.get("duration", -9) - want.get("duration", -1)) < 2e-3), (
                f"{what}: sample_rate/duration {j.get('sample_rate')}/{j.get('duration')} "
                f"(want {want.get('sample_rate')}/{want.get('duration')})")
        got = [(s.get("start_sample"), s.get("end_sample")) for s in j.get("segments") or []]
        exp = [(s["start_sample"], s["end_sample"]) for s in want.get("segments", [])]
        assert got == exp, f"{what}: segments {got} (want {exp})"
        ok = all(abs(s.get("start", -9) - w["start"]) < 2e-3 and abs(s.get("end", -9) - w["end"]) < 2e-3
                 and abs(s.get("confidence", -9) - w["confidence"]) < 1e-3
                 for s, w in zip(j.get("segments") or [], want.get("segments", [])))
        assert ok, f"{what}: start/end/confidence ({j.get('segments')} vs {want.get('segments')})"
        assert "probs" not in j, f"{what}: no probs unless asked"
    want = assets.vad("gap.wav", "--probs")
    r = vad(port, assets.bytes("gap.wav"), probs="true", model="silero")
    j = r.json() or {}
    probs = j.get("probs") or []
    assert r.status == 200 and abs(j.get("hop_seconds", -1) - want.get("hop_seconds", -2)) < 1e-9, (
            f"vad probs=true: hop_seconds {j.get('hop_seconds')} (want {want.get('hop_seconds')})")
    assert (len(probs) == len(want.get("probs", [])) and len(probs) > 0
            and all(abs(p - q) < 1e-5 for p, q in zip(probs, want["probs"]))), (
            f"vad probs=true: {len(probs)} probs equal the CLI's ({len(want.get('probs', []))})")
    # bad VAD requests
    check_error(srv, vad(port, assets.bytes("gap.wav"), model="nope"), 404, "vad: unknown model id", param="model")
    r = vad(port, assets.bytes("gap.wav"), model="tiny")
    assert r.status in (400, 404), f"vad with an ASR model id: 400 or 404 ({r!r})"
    check_error(srv, r, r.status if r.status in (400, 404) else 400, "vad with an ASR model id")
    for field, value in (("threshold", "abc"), ("threshold", "1.5"), ("min_silence_ms", "many"),
                         ("probs", "maybe")):
        check_error(srv, vad(port, assets.bytes("gap.wav"), **{field: value}), 400, f"vad {field}={value}")
    check_error(srv, vad(port, None, threshold="0.5"), 400, "vad without a file")
    check_error(srv, vad(port, b""), 400, "vad with a 0-byte file")
    check_error(srv, vad(port, assets.bytes("text.wav")), 400, "vad with non-audio bytes")


def test_bad_requests(srv, assets):
    port = srv.port
    clip = assets.bytes("clip.wav")
    T = "/v1/audio/transcriptions"
    for field, value in (("response_format", "xml"), ("beam_size", "0"), ("beam_size", "-2"),
                         ("beam_size", "two"), ("temperature", "-1"), ("temperature", "hot"),
                         ("language", "xx"), ("language", "fr"), ("vad", "maybe"), ("stream", "perhaps"),
                         ("timestamp_granularities[]", "minute")):
        check_error(srv, transcribe(port, clip, **{field: value}), 400, f"{field}={value}")
    check_error(srv, transcribe(port, clip, beam_size="2", temperature="0.5"), 400,
                "beam_size=2 with temperature=0.5 (sampling has one beam)")
    check_error(srv, transcribe(port, clip, model="nope"), 404, "unknown model id", param="model")
    r = transcribe(port, clip, model="silero")
    check_error(srv, r, r.status if r.status in (400, 404) else 400, "transcription with a VAD model id")
    assert r.status in (400, 404), f"transcription with a VAD model id: 400 or 404 ({r!r})"
    check_error(srv, transcribe(port, None, model="tiny"), 400, "missing file")
    check_error(srv, transcribe(port, b""), 400, "0-byte file")
    check_error(srv, transcribe(port, assets.bytes("text.wav"), filename="text.wav"), 400, "non-audio bytes")
    check_error(srv, transcribe(port, assets.bytes("trunc.wav")), 400, "a WAV header without data")
    check_error(srv, transcribe(port, os.urandom(5000), filename="noise.mp3"), 400, "random bytes as .mp3")
    # malformed multipart
    mp = "multipart/form-data; boundary=XyZzy"
    check_error(srv, request(port, "POST", T, b"this is not multipart at all\r\n" * 20, {"Content-Type": mp}), 400,
                "garbage body with a multipart content type")
    body, _ = multipart([("model", "tiny")], [("file", "clip.wav", clip)], boundary="RealBoundary")
    check_error(srv, request(port, "POST", T, body, {"Content-Type": mp}), 400, "a boundary that never appears")
    check_error(srv, request(port, "POST", T, body, {"Content-Type": "multipart/form-data"}), 400,
                "multipart content type without a boundary")
    check_text(srv, request(port, "POST", T, body, {"Content-Type": 'multipart/form-data; boundary="RealBoundary"'}),
               assets.asr_text("clip.wav"), "a quoted boundary parameter (RFC 2046)")
    cut = body[:len(body) // 2]
    check_error(srv, request(port, "POST", T, cut, {"Content-Type": "multipart/form-data; boundary=RealBoundary"}),
                400, "multipart cut short (no closing boundary)")
    check_error(srv, request(port, "POST", T, b"", {"Content-Type": mp}), 400, "empty multipart body")
    r = request(port, "POST", T, b'{"model": "tiny"}', {"Content-Type": "application/json"})
    check_error(srv, r, r.status if r.status in (400, 415) else 400, "a JSON body instead of multipart")
    assert r.status in (400, 415), f"a JSON body instead of multipart: 400 or 415 ({r!r})"
    # a header without a value, odd disposition
    bad = (b"--B\r\nContent-Disposition: form-data\r\n\r\nxx\r\n--B--\r\n")
    check_error(srv, request(port, "POST", T, bad, {"Content-Type": "multipart/form-data; boundary=B"}), 400,
                "a part without a name (and no file)")
    # still fine afterwards
    check_text(srv, transcribe(port, clip), assets.asr_text("clip.wav"), "a good request after the bad ones")


@pytest.mark.threads
def test_disconnects(srv, assets):
    """Clients that hang up mid-upload, mid-work and mid-stream."""
    port = srv.port
    T = "/v1/audio/transcriptions"
    long = assets.bytes("long.wav")

    def head(body_len, ctype):
        return (f"POST {T} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: {ctype}\r\n"
                f"Content-Length: {body_len}\r\n\r\n").encode()

    def hang_up(body, ctype, send, wait=0.0, read_first=False, rst=False):
        """Sends SEND bytes of the request, waits (for the job to start) or reads the
        first bytes of the answer, then closes (RST: resets) the connection."""
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=HTTP_TIMEOUT)
            s.sendall(head(len(body), ctype) + body[:send])
            time.sleep(wait)
            if read_first:
                s.recv(100)
            if rst:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
            s.close()
        except OSError as e:
            pytest.fail(f"[{srv.name}] disconnect test could not talk to the server: {e!r}")

    # how long one long request takes here: a hung-up job that is not cancelled keeps a worker that long
    t0 = time.time()
    check_text(srv, transcribe(port, long, beam_size="4"), assets.asr_text("long.wav", "--beam-size", "4"),
               "long.wav with beam_size=4")
    t_long = time.time() - t0
    body, ctype = multipart([("beam_size", "4")], [("file", "long.wav", long)])
    hang_up(body, ctype, len(body) // 2)
    srv.survived("a client that hangs up mid-upload")
    hang_up(body, ctype, len(body) // 2, rst=True)
    srv.survived("a client that resets mid-upload")
    hang_up(body, ctype, len(body))
    srv.survived("a client that hangs up right after its upload")
    sbody, sctype = multipart([("stream", "true")], [("file", "long.wav", long)])
    hang_up(sbody, sctype, len(sbody), read_first=True, rst=True)
    srv.survived("a client that resets mid-stream")
    hang_up(sbody, sctype, len(sbody), read_first=True)
    srv.survived("a client that hangs up mid-stream")
    hang_up(sbody, sctype, len(sbody))
    srv.survived("a streaming client that hangs up at once")
    # both workers busy with long jobs (beam 8: twice as long as t_long) whose clients then leave
    body8, ctype8 = multipart([("beam_size", "8")], [("file", "long.wav", long)])
    hang_up(body8, ctype8, len(body8), wait=0.5 * SLOW)
    hang_up(body8, ctype8, len(body8), wait=0.5 * SLOW, rst=True)
    t0 = time.time()
    check_text(srv, transcribe(port, assets.bytes("clip.wav")), assets.asr_text("clip.wav"),
               "a normal request after clients hung up")
    dt = time.time() - t0
    srv.survived("clients that hang up while their long files are transcribed")
    print(f"  a long request takes {t_long:.2f} s; the request after the hang-ups was answered in {dt:.2f} s")
    # without cancellation the two abandoned jobs would hold both workers for about 2 t_long - 1 s more
    assert dt < 0.5 * t_long, (f"[{srv.name}] the jobs of clients that hung up are cancelled: the next request took "
                               f"{dt:.2f} s (a long job takes {t_long:.2f} s)")


@pytest.mark.threads
def test_concurrent_mixed(srv, assets):
    """Transcriptions and VAD at once on one server give the single-request answers."""
    results = []

    def asr_client(name, fmt):
        for _ in range(3):
            r = transcribe(srv.port, assets.bytes(name), response_format=fmt)
            t = (r.json() or {}).get("text") if fmt != "text" else r.text.rstrip("\n")
            results.append((f"asr {name} {fmt}", r.status == 200 and t == assets.asr_text(name), r))

    def vad_client(name):
        want = [(s["start_sample"], s["end_sample"]) for s in assets.vad(name)["segments"]]
        for _ in range(3):
            r = vad(srv.port, assets.bytes(name))
            got = [(s.get("start_sample"), s.get("end_sample")) for s in (r.json() or {}).get("segments") or []]
            results.append((f"vad {name}", r.status == 200 and got == want, r))

    assets.asr_text("gap.wav"), assets.asr_text("clip2.wav"), assets.vad("gap.wav"), assets.vad("clip2.wav")
    wait_all([threading.Thread(target=asr_client, args=("gap.wav", "json")),
              threading.Thread(target=asr_client, args=("clip2.wav", "text")),
              threading.Thread(target=vad_client, args=("gap.wav",)),
              threading.Thread(target=vad_client, args=("clip2.wav",)),
              threading.Thread(target=asr_client, args=("gap.wav", "verbose_json"))])
    bad = [(w, r) for w, ok, r in results if not ok]
    assert len(results) == 15 and not bad, f"[{srv.name}] concurrent mixed requests: {len(bad)} wrong: {bad[:3]}"


def curl_checks(srv, assets, auth=None, upload=None):
    """A few requests as users make them, with the curl tool."""
    def curl(*args):
        out = os.path.join(serverlib.WORK, "curl.out")
        p = subprocess.run(["curl", "-sS", "-o", out, "-w", "%{http_code}", *args], capture_output=True,
                           text=True, timeout=HTTP_TIMEOUT)
        try:
            body = open(out, "rb").read().decode("utf-8", "replace")
            os.remove(out)
        except OSError:
            body = ""
        return p.stdout.strip(), body, p.stderr.strip()

    if srv is not None and srv.ok:
        base = f"http://127.0.0.1:{srv.port}"
        code, body, err = curl(base + "/health")
        assert code == "200" and '"ok"' in body, f"curl /health: {code} {body!r} {err}"
        code, body, err = curl(base + "/v1/models")
        assert code == "200" and '"tiny"' in body, f"curl /v1/models: {code} {body[:100]!r} {err}"
        code, body, err = curl(base + "/v1/audio/transcriptions", "-F", f"file=@{assets.path('clip.wav')}",
                               "-F", "model=tiny")
        try:
            text = json.loads(body).get("text")
        except ValueError:
            text = None
        assert code == "200" and text == assets.asr_text("clip.wav"), (f"curl -F file=@clip.wav -F model=tiny: {code} "
                                                                  f"{body[:200]!r} {err}")
        code, body, err = curl(base + "/v1/audio/transcriptions", "-F", f"file=@{assets.path('clip.wav')}",
                               "-F", "response_format=text")
        assert code == "200" and body == assets.asr_text("clip.wav") + "\n", f"curl response_format=text: {code} {body!r}"
    if auth is not None and auth.ok:
        srv_a, key = auth
        base = f"http://127.0.0.1:{srv_a.port}"
        code, body, err = curl(base + "/v1/audio/transcriptions", "-F", f"file=@{assets.path('clip.wav')}")
        assert code == "401", f"curl without the API key: 401 ({code} {body[:200]!r})"
        code, body, err = curl(base + "/v1/models", "-H", f"Authorization: Bearer {key}")
        assert code == "200", f"curl with the API key: 200 ({code} {body[:200]!r})"
        code, body, err = curl(base + "/health")
        assert code == "200", f"curl /health on a keyed server: 200 ({code})"
    if upload is not None and upload.ok:
        base = f"http://127.0.0.1:{upload.port}"
        code, body, err = curl(base + "/v1/audio/transcriptions", "-F", f"file=@{assets.path('big.wav')}",
                               "-F", "model=tiny")
        assert code == "413", f"curl with a 2 MB file, --max-upload-mb 1: 413 ({code} {body[:200]!r} {err})"
        upload.survived("curl 413")


class Keyed:
    def __init__(self, srv, key):
        self.srv, self.key = srv, key

    @property
    def ok(self):
        return self.srv.ok

    def __iter__(self):
        return iter((self.srv, self.key))


def test_auth(assets, start_server):
    key = "sk-test-" + os.urandom(6).hex()
    srv = start_server("auth", ["--model", f"tiny={assets.tiny}", "--model", f"silero={SILERO}", "--api-key", key,
                          "--workers", "1", "--threads", "1"])
    port, clip = srv.port, assets.bytes("clip.wav")
    r = request(port, "GET", "/health")
    assert r.status == 200, f"[auth] /health needs no key ({r!r})"
    assert r.header("access-control-allow-origin") == "", f"[auth] no CORS headers without --cors ({r.headers})"
    for path in ("/v1/models",):
        check_error(srv, request(port, "GET", path), 401, f"GET {path} without a key")
        check_error(srv, request(port, "GET", path, headers=auth_headers("wrong")), 401, f"GET {path} wrong key")
        check_error(srv, request(port, "GET", path, headers={"Authorization": key}), 401,
                    f"GET {path} key without 'Bearer'")
        check_error(srv, request(port, "GET", path, headers=auth_headers(key + "x")), 401,
                    f"GET {path} key with a suffix")
        check_error(srv, request(port, "GET", path, headers=auth_headers(key[:-1])), 401,
                    f"GET {path} a prefix of the key")
        r = request(port, "GET", path, headers=auth_headers(key))
        assert r.status == 200 and r.json() and r.json().get("object") == "list", f"[auth] GET {path} with key {r!r}"
    check_error(srv, transcribe(port, clip), 401, "transcription without a key")
    check_error(srv, transcribe(port, clip, key="wrong"), 401, "transcription with a wrong key")
    check_error(srv, vad(port, clip), 401, "vad without a key")
    check_text(srv, transcribe(port, clip, key=key), assets.asr_text("clip.wav"), "transcription with the key")
    r = vad(port, clip, key=key)
    assert r.status == 200 and (r.json() or {}).get("segments") is not None, f"[auth] vad with the key {r!r}"
    curl_checks(None, assets, auth=Keyed(srv, key))
    srv.stop()


@pytest.mark.threads
def test_upload_limit(assets, start_server):
    srv = start_server("upload", ["--model", f"tiny={assets.tiny}", "--model", f"silero={SILERO}", "--max-upload-mb", "1",
                            "--workers", "1", "--threads", "1"])
    port = srv.port
    T = "/v1/audio/transcriptions"
    check_text(srv, transcribe(port, assets.bytes("mid.wav")), assets.asr_text("mid.wav"), "a 0.5 MB upload under a 1 MB limit")
    big = assets.bytes("big.wav")
    check_error(srv, transcribe(port, big), 413, "a 2 MB upload with --max-upload-mb 1")
    check_error(srv, vad(port, big), 413, "a 2 MB VAD upload with --max-upload-mb 1")
    body, ctype = multipart([("model", "tiny")], [("file", "big.wav", big)])
    head = (f"POST {T} HTTP/1.1\r\nHost: x\r\nContent-Type: {ctype}\r\nContent-Length: {len(body)}\r\n"
            f"Connection: close\r\n\r\n").encode()
    status, data = raw_exchange(port, head, body)
    assert status == 413, f"[upload] raw 2 MB upload with Content-Length: 413 ({data[:200]!r})"
    srv.survived("raw 2 MB upload")
    head = (f"POST {T} HTTP/1.1\r\nHost: x\r\nContent-Type: {ctype}\r\nTransfer-Encoding: chunked\r\n"
            f"Connection: close\r\n\r\n").encode()
    status, data = raw_exchange(port, head, body, chunked=True)
    assert status == 413, f"[upload] 2 MB chunked upload (no Content-Length): 413 ({data[:200]!r})"
    srv.survived("2 MB chunked upload")
    # a client announcing 10 GB and waiting for 100-continue is refused at once,
    # before it sends anything
    head = (f"POST {T} HTTP/1.1\r\nHost: x\r\nContent-Type: {ctype}\r\nContent-Length: 10000000000\r\n"
            f"Expect: 100-continue\r\nConnection: close\r\n\r\n").encode()
    status, data = raw_exchange(port, head, timeout=30 * SLOW)
    assert status == 413, f"[upload] Content-Length 10 GB with Expect: 100-continue: 413 at once ({data[:200]!r})"
    srv.survived("Content-Length 10 GB")
    # a small chunked upload is fine
    mbody, mctype = multipart([("model", "tiny")], [("file", "clip.wav", assets.bytes("clip.wav"))])
    head = (f"POST {T} HTTP/1.1\r\nHost: x\r\nContent-Type: {mctype}\r\nTransfer-Encoding: chunked\r\n"
            f"Connection: close\r\n\r\n").encode()
    status, data = raw_exchange(port, head, mbody, chunked=True)
    text = None
    if b"\r\n\r\n" in data:
        try:
            hdrs, rest = data.split(b"\r\n\r\n", 1)
            if b"chunked" in hdrs.lower():
                out, rest2 = b"", rest
                while rest2:
                    n, _, rest2 = rest2.partition(b"\r\n")
                    n = int(n, 16)
                    if n == 0:
                        break
                    out, rest2 = out + rest2[:n], rest2[n + 2:]
                rest = out
            text = json.loads(rest).get("text")
        except (ValueError, AttributeError):
            pass
    assert status == 200 and text == assets.asr_text("clip.wav"), f"[upload] a small chunked upload works ({data[:300]!r})"
    curl_checks(None, assets, upload=srv)
    srv.stop()


@pytest.mark.threads
def test_queue(assets, start_server):
    """--workers 1 --max-queue 1: one runs, one waits, the rest get 503 at once."""
    srv = start_server("queue", ["--model", f"tiny={assets.tiny}", "--model", f"silero={SILERO}", "--workers", "1",
                           "--max-queue", "1", "--threads", "1", "--shutdown-timeout", "600"])
    # 4 beams keep the one worker busy while the others arrive; a sanitizer slows greedy decoding enough
    beams = "1" if SANITIZED else "4"
    want = assets.asr_text("long.wav", "--beam-size", beams)
    long = assets.bytes("long.wav")
    results = [None] * 5

    def client(i):
        t0 = time.time()
        results[i] = (transcribe(srv.port, long, beam_size=beams), time.time() - t0)

    wait_all([threading.Thread(target=client, args=(i,)) for i in range(len(results))])
    statuses = [r.status for r, _ in results]
    print(f"  queue test: statuses {statuses}, seconds {[round(t, 2) for _, t in results]}")
    assert statuses.count(503) >= 1, f"[queue] a full queue answers 503 ({statuses})"
    assert all(s in (200, 503) for s in statuses), f"[queue] only 200 and 503 ({statuses})"
    assert statuses.count(200) >= 1, f"[queue] the queued requests are served ({statuses})"
    for r, _ in results:
        if r.status == 200:
            assert (r.json() or {}).get("text") == want, f"[queue] a served request has the CLI's text ({r!r})"
        elif r.status == 503:
            j = r.json() or {}
            assert isinstance(j.get("error"), dict) and j["error"].get("message"), f"[queue] 503 error JSON ({r!r})"
    srv.survived("a full queue")
    # the queue drains: sequential requests go through again
    check_text(srv, transcribe(srv.port, assets.bytes("clip.wav")), assets.asr_text("clip.wav"), "a request after the rush")
    # SIGTERM lets the request in progress finish (--help: "stops it after the requests in progress")
    inflight = []
    t = threading.Thread(target=lambda: inflight.append(transcribe(srv.port, long, beam_size=beams)))
    t.start()
    time.sleep(1.0 * SLOW)
    srv.terminate()
    t.join()
    r = inflight[0] if inflight else Resp(0, {}, b"", "no answer")
    assert r.status == 200 and (r.json() or {}).get("text") == want, (
            f"[queue] the request in progress at SIGTERM is answered ({r!r})")
    srv.stop()


def test_env(assets, start_server):
    """Every setting from the environment; flags win over it."""
    key = "envkey-" + os.urandom(4).hex()
    env = base_env()
    env.update(AUDIOC_HOST="127.0.0.1", AUDIOC_PORT="0", AUDIOC_MODELS=f"tiny={assets.tiny},silero={SILERO}",
               AUDIOC_THREADS="1", AUDIOC_WORKERS="1", AUDIOC_MAX_UPLOAD_MB="1", AUDIOC_MAX_QUEUE="1",
               AUDIOC_API_KEY=key, AUDIOC_CORS="https://env.example")
    srv = start_server("env", [], env=env, listen=False)
    port = srv.port
    r = request(port, "GET", "/v1/models", headers=auth_headers(key))
    ids = [m.get("id") for m in (r.json() or {}).get("data") or []]
    assert r.status == 200 and ids == ["tiny", "silero"], f"[env] AUDIOC_MODELS: {ids} ({r!r})"
    check_error(srv, request(port, "GET", "/v1/models"), 401, "AUDIOC_API_KEY: no key")
    assert r.header("access-control-allow-origin") == "https://env.example", (
            f"[env] AUDIOC_CORS: Allow-Origin {r.header('access-control-allow-origin')!r}")
    r = request(port, "OPTIONS", "/v1/audio/transcriptions",
                headers={"Origin": "https://env.example", "Access-Control-Request-Method": "POST",
                         "Access-Control-Request-Headers": "authorization"})
    assert r.status == 204 and r.header("access-control-allow-origin") == "https://env.example", (
            f"[env] a CORS preflight (which carries no key) is answered 204 ({r!r}, {r.headers})")
    check_text(srv, transcribe(port, assets.bytes("clip.wav"), key=key), assets.asr_text("clip.wav"), "env: transcription")
    check_error(srv, transcribe(port, assets.bytes("big.wav"), key=key), 413, "AUDIOC_MAX_UPLOAD_MB=1: 2 MB upload")
    # AUDIOC_WORKERS=1, AUDIOC_MAX_QUEUE=1: of 5 slow requests at once, some get 503
    want = assets.asr_text("mid.wav", "--beam-size", "8")
    results = []
    wait_all([threading.Thread(target=lambda: results.append(
        transcribe(port, assets.bytes("mid.wav"), key=key, beam_size="8"))) for _ in range(5)])
    statuses = sorted(r.status for r in results)
    assert (503 in statuses and all(s in (200, 503) for s in statuses)
            and all((r.json() or {}).get("text") == want for r in results if r.status == 200)), (
            f"[env] AUDIOC_WORKERS=1 AUDIOC_MAX_QUEUE=1: 503 for some of 5 slow requests, the CLI's text for "
            f"the others ({statuses})")
    srv.survived("a full queue")
    srv.stop()

    # flags win: the environment names a busy port, another key, model list, limit and origin
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen(1)
    env.update(AUDIOC_PORT=str(busy.getsockname()[1]), AUDIOC_MODELS=f"envtiny={assets.tiny}")
    flag_key = "flagkey-" + os.urandom(4).hex()
    srv = start_server("flags_win", ["--model", f"tiny={assets.tiny}", "--api-key", flag_key, "--max-upload-mb", "50",
                               "--cors", "https://flag.example", "--workers", "1", "--threads", "1"], env=env)
    port = srv.port
    assert port != busy.getsockname()[1], "[flags_win] --port 0 wins over AUDIOC_PORT"
    r = request(port, "GET", "/v1/models", headers=auth_headers(flag_key))
    ids = [m.get("id") for m in (r.json() or {}).get("data") or []]
    assert r.status == 200 and ids == ["tiny"], f"[flags_win] --model wins over AUDIOC_MODELS: {ids} ({r!r})"
    assert r.header("access-control-allow-origin") == "https://flag.example", (
            f"[flags_win] --cors wins: {r.header('access-control-allow-origin')!r}")
    check_error(srv, request(port, "GET", "/v1/models", headers=auth_headers(key)), 401,
                "the environment's key when --api-key is given")
    check_text(srv, transcribe(port, assets.bytes("big.wav"), key=flag_key), assets.asr_text("big.wav", "--no-vad"),
               "--max-upload-mb 50 wins over AUDIOC_MAX_UPLOAD_MB=1")
    srv.stop()
    busy.close()


def test_gguf(assets, start_server):
    srv = start_server("gguf", ["--model", f"q8={assets.gguf}", "--model", f"silero={SILERO}", "--workers", "1",
                          "--threads", "1"])
    r = request(srv.port, "GET", "/v1/models")
    m = {x.get("id"): x for x in (r.json() or {}).get("data") or []}
    assert m.get("q8", {}).get("family") == "hviske_asr" and m.get("q8", {}).get("task") == "transcription", (
            f"[gguf] a GGUF package is an ASR model: {m.get('q8')}")
    check_text(srv, transcribe(srv.port, assets.bytes("gap.wav")), assets.asr_text("gap.wav", model=assets.gguf),
               "GGUF package transcription")
    srv.stop()


def test_bundled_model(assets, start_server):
    """No --model: the bundled Danish model serves as hviske-tiny-da and transcribes its samples right."""
    assert SAMPLES, "[bundled] the sample clips are in samples/"
    srv = start_server("bundled", ["--workers", "1", "--threads", "2"])
    r = request(srv.port, "GET", "/v1/models")
    ids = [m.get("id") for m in (r.json() or {}).get("data") or []]
    assert r.status == 200 and ids == ["hviske-tiny-da", "silero-vad"], (
            f"[bundled] /v1/models lists hviske-tiny-da and silero-vad: {ids}")
    for f in SAMPLES:
        rc, out, err = audioc("transcribe", "-m", testenv.BUNDLED_MODEL, f)
        assert rc == 0 and out.strip(), f"[bundled] the CLI transcribes {os.path.basename(f)} ({rc}: {err[-200:]})"
        with open(f, "rb") as fh:
            check_text(srv, transcribe(srv.port, fh.read(), filename=os.path.basename(f)), out.strip(),
                       f"[bundled] {os.path.basename(f)}")
    srv.stop()
