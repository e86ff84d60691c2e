"""audioc-server's web page (GET /) over HTTP, and in a real browser: Debian's
Chromium, headless, driven by puppeteer-core (tests/node/web_page.js) as a
person would use the page. One browser run covers every scenario (about
45 s on two busy cores; the whole file, Firefox included, about 85 s); each
test checks its part of what the page showed:

- the page and its files: types, ETag and 304, the Content-Security-Policy,
  public under --api-key while /v1/ is not, 404 under --no-webui;
- it loads without console errors and fetches nothing from elsewhere, and
  lists the served models, voices and routes;
- a file transcribed with the bundled model: the segments appear as they are
  streamed, with their times; the TXT, SRT and VTT downloads are audioc
  transcribe's, the JSON download the server's verbose_json; playback marks
  the segment being played;
- word timestamps: a span per word with the server's times, the one playing marked;
- a file that is not audio: the server's message on the page;
- Cancel: the browser aborts the request and the server logs the hang-up (499);
- the microphone (Chromium's fake capture device playing a clip): recorded
  as WebM, sent and transcribed;
- speech with the tiny Vevo2 package, streamed (played as it comes) and not:
  the audio decodes in the page, and its download is /v1/audio/speech's
  bytes for the same seed, also when the voice is uploaded with its
  transcript; a conversion's download is /v1/audio/conversions', and a
  recording from the microphone converts too;
- a server with --api-key: the page asks for the key with the server's 401
  message, again after a wrong key, and keeps the right one;
- keyboard only: Tab reaches every control of each panel in order (the
  panels chosen with the arrow keys), every field has a label;
- a phone's screen (375x667): no panel scrolls sideways;
- behind a reverse proxy at a sub-path (/audioc/): it loads and transcribes,
  and no request leaves the sub-path.
Screenshots of each state: WORK/test_web/screenshots (desktop-*.png, phone-*.png).
The scenarios that could differ between browsers run again in Firefox ESR
(test_firefox: about 35 s of the 85, most of it Firefox starting).
The browser tests are skipped, with the reason, where Chromium (or Firefox)
or puppeteer-core is not installed (the HTTP ones still run)."""
import base64
import gzip
import http.client
import http.server
import json
import os
import shutil
import subprocess
import threading
import time

import pytest

import packages
import serverlib as ts
import testenv
from serverlib import Server, multipart, request, sh, transcribe

NODE_DIR = os.path.join(testenv.ROOT, "tests", "node")
DRIVER = os.path.join(NODE_DIR, "web_page.js")
VAD = os.path.join(testenv.ROOT, "models", "silero-vad", "silero_vad_16k.safetensors")
KEY = "sekret-web"
VOICE_TEXT = "Please call Stella and ask her to bring these things."
SPEAK = {"input": "Good morning to you.", "voice": "alice", "seed": 5, "steps": 8, "max_tokens": 30}
SCENARIOS = ["load", "transcribe_file", "words", "bad_file", "cancel", "microphone", "speak", "speak_upload",
             "convert", "convert_recording", "api_key", "keyboard", "phone", "subpath"]
PREFIX = "/audioc"   # the sub-path of the proxy


def chromium():
    for name in (os.environ.get("CHROMIUM"), "chromium", "chromium-browser"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


@pytest.fixture(scope="module")
def files(server_work, audioc):
    """The clips under WORK, and the tiny Vevo2 package."""
    testenv.require_tools("espeak-ng", "sox")
    w = lambda name: os.path.join(server_work, name)  # noqa: E731
    sh("espeak-ng", "-v", "da", "-w", w("raw1.wav"), "Hej med dig, hvordan går det i dag?")
    sh("espeak-ng", "-v", "da", "-w", w("raw2.wav"), "Vejret er godt, og solen skinner over byen.")
    sh("sox", "-D", w("raw1.wav"), "-r", "16000", "-b", "16", w("clip.wav"))
    sh("sox", "-D", w("raw2.wav"), "-r", "16000", "-b", "16", w("clip2.wav"))
    sh("sox", "-n", "-r", "16000", "-c", "1", "-b", "16", w("sil3.wav"), "trim", "0", "3")
    sh("sox", "-D", w("clip.wav"), w("sil3.wav"), w("clip2.wav"), w("speech.wav"))          # two segments
    sh("sox", "-D", *[w("clip.wav")] * 40, w("clip40.wav"))
    sh("sox", "-D", *[w("clip40.wav")] * 6, w("long.wav"))                                  # ~8 min, 15 MB
    sh("espeak-ng", "-v", "en+f3", "-p", "75", "-w", w("voice22.wav"), VOICE_TEXT)
    sh("sox", "-D", w("voice22.wav"), "-r", "24000", "-b", "16", w("voice.wav"), "trim", "0", "3.3")
    with open(w("notes.wav"), "w") as f:
        f.write("not audio\n" * 50)
    return {"vevo2": packages.vevo2("F32", seed=21), "path": w}


@pytest.fixture(scope="module")
def servers(files):
    """The page's server (the bundled model and VAD, the tiny Vevo2 package,
    two voices, one worker) and one that asks for an API key."""
    p = files["path"]
    main = Server("web", ["--model", f"hviske={testenv.BUNDLED_MODEL}", "--model", f"silero={VAD}",
                          "--model", f"v={files['vevo2']}", "--voice", f"alice={p('voice.wav')}:{VOICE_TEXT}",
                          "--voice", f"bob={p('voice.wav')}", "--threads", "2", "--workers", "1"])
    keyed = Server("web_key", ["--model", f"hviske={testenv.BUNDLED_MODEL}", "--api-key", KEY, "--threads", "1"])
    yield main, keyed
    main.stop()
    keyed.stop()


class Proxy(http.server.BaseHTTPRequestHandler):
    """A reverse proxy as nginx's `location /audioc/ { proxy_pass http://server/; }`:
    PREFIX/PATH to the server's /PATH, answers passed on as they come."""
    upstream = None

    def log_message(self, *args):
        pass

    def forward(self):
        if self.path == PREFIX:
            self.send_response(301)
            self.send_header("Location", PREFIX + "/")
            self.end_headers()
            return
        if not self.path.startswith(PREFIX + "/"):
            self.send_error(404)
            return
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        up = http.client.HTTPConnection("127.0.0.1", self.upstream, timeout=ts.HTTP_TIMEOUT)
        hop = {"connection", "keep-alive", "transfer-encoding", "host", "content-length"}
        up.request(self.command, self.path[len(PREFIX):], body=body,
                   headers={k: v for k, v in self.headers.items() if k.lower() not in hop})
        r = up.getresponse()
        self.send_response(r.status)
        for k, v in r.getheaders():
            if k.lower() not in hop:
                self.send_header(k, v)
        self.send_header("Connection", "close")
        self.end_headers()
        try:
            while chunk := r.read1(65536):
                self.wfile.write(chunk)
                self.wfile.flush()
        except OSError:
            pass
        up.close()

    do_GET = do_POST = do_HEAD = forward


@pytest.fixture(scope="module")
def proxy(servers):
    Proxy.upstream = servers[0].port
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{srv.server_address[1]}{PREFIX}/"
    srv.shutdown()


@pytest.fixture(scope="module")
def page(files, servers, server_work, proxy):
    """What the browser saw in each scenario (one run of web_page.js)."""
    browser = chromium()
    if not browser:
        pytest.skip("no Chromium: install Debian's chromium (scripts/setup.sh) to test the web page in a browser")
    if not os.path.isdir(os.path.join(NODE_DIR, "node_modules", "puppeteer-core")):
        msg = "puppeteer-core is not installed (tests/node/node_modules: run scripts/setup.sh)"
        if os.environ.get("CI"):
            pytest.fail(msg)
        pytest.skip(msg)
    testenv.require_tools("node")
    main, keyed = servers
    p = files["path"]
    shots, downloads = os.path.join(server_work, "screenshots"), os.path.join(server_work, "downloads")
    for d in (shots, downloads):
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
    cfg = {"chromium": browser, "base": f"http://127.0.0.1:{main.port}/",
           "key_base": f"http://127.0.0.1:{keyed.port}/", "sub_base": proxy, "key": KEY, "shots": shots, "downloads": downloads,
           "timeout_ms": 60000 * ts.SLOW, "cancel_after_ms": 200, "record_ms": 2000,
           "files": {"speech": p("speech.wav"), "bad": p("notes.wav"), "long": p("long.wav"),
                     "source": p("voice.wav"), "microphone": p("clip.wav")},
           "speak": {"input": SPEAK["input"], "voice": SPEAK["voice"], "voice_text": VOICE_TEXT,
                     "fields": {"s-seed": SPEAK["seed"], "s-steps": SPEAK["steps"], "s-max-tokens": SPEAK["max_tokens"]}},
           "convert": {"voice": "bob", "fields": {"c-seed": 5}},
           "scenarios": SCENARIOS}
    out = drive(cfg, p("web.json"))
    out["_cfg"] = cfg   # for the run in Firefox
    return out


def drive(cfg, path):
    """Runs web_page.js with CFG (written to PATH): what each scenario saw."""
    with open(path, "w") as f:
        json.dump(cfg, f)
    t0 = time.time()
    r = subprocess.run(["node", DRIVER, path], cwd=NODE_DIR, capture_output=True, text=True, timeout=600 * ts.SLOW)
    print(f"  the browser run took {time.time() - t0:.1f} s; screenshots in {cfg['shots']}")
    try:
        out = json.loads(r.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        pytest.fail(f"web_page.js: exit {r.returncode}, stdout {r.stdout[-1000:]!r}, stderr {r.stderr[-2000:]!r}")
    assert "fatal" not in out, f"web_page.js could not run the browser: {out['fatal'][:2000]}"
    for name, res in out.items():
        print(f"  {name}: {res.get('seconds', 0):.1f} s")
    return out


def scenario(page, name):
    res = page.get(name) or {}
    failed = set(res) <= {"error", "seconds"} and res.get("error")
    assert not failed, f"the browser scenario '{name}' failed: {res.get('error')}"
    return res


# ---------------------------------------------------------------- over HTTP

def test_files_served(servers, start_server):
    main, keyed = servers
    r = request(main.port, "GET", "/")
    csp = r.header("content-security-policy")
    assert r.status == 200 and r.header("content-type") == "text/html; charset=utf-8" and b"web/app.js" in r.body, (
            f"GET /: the page ({r!r})")
    assert "default-src 'none'" in csp and "script-src 'self'" in csp and "'unsafe-inline'" not in csp, (
            f"GET /: a strict Content-Security-Policy ({csp!r})")
    etag = r.header("etag")
    r2 = request(main.port, "GET", "/", headers={"If-None-Match": etag})
    assert etag and r2.status == 304 and r2.body == b"", f"GET / with If-None-Match {etag}: 304 ({r2!r})"
    for name, ctype in (("app.js", "text/javascript; charset=utf-8"), ("style.css", "text/css; charset=utf-8"),
                        ("icon.svg", "image/svg+xml")):
        r = request(main.port, "GET", f"/web/{name}")
        assert r.status == 200 and r.header("content-type") == ctype and r.header("etag") and len(r.body) > 0, (
                f"GET /web/{name}: {ctype} with an ETag ({r!r})")
    plain = request(main.port, "GET", "/web/app.js")
    z = request(main.port, "GET", "/web/app.js", headers={"Accept-Encoding": "gzip, deflate"})
    assert (z.status == 200 and z.header("content-encoding") == "gzip" and gzip.decompress(z.body) == plain.body
            and len(z.body) < len(plain.body) and z.header("etag") != plain.header("etag")
            and "Accept-Encoding" in z.header("vary")), f"GET /web/app.js, Accept-Encoding gzip: compressed ({z!r})"
    r = request(main.port, "GET", "/web/app.js", headers={"Accept-Encoding": "gzip;q=0"})
    assert r.header("content-encoding") == "" and r.body == plain.body, "Accept-Encoding gzip;q=0: not compressed"
    r = request(main.port, "GET", "/web/missing.js")
    assert r.status == 404 and (r.json() or {}).get("error"), f"GET /web/missing.js: 404 in OpenAI's shape ({r!r})"
    r = request(main.port, "POST", "/", b"x")
    assert r.status == 405, f"POST /: 405 ({r!r})"
    # behind --api-key the page is public, the API is not
    assert request(keyed.port, "GET", "/").status == 200, "GET / needs no API key"
    assert request(keyed.port, "GET", "/v1/models").status == 401, "GET /v1/models still needs the key"
    off = start_server("web_off", ["--model", f"hviske={testenv.BUNDLED_MODEL}", "--no-webui", "--threads", "1"])
    for path in ("/", "/web/app.js"):
        r = request(off.port, "GET", path)
        assert r.status == 404, f"--no-webui: GET {path} is 404 ({r!r})"
    assert request(off.port, "GET", "/v1/models").status == 200, "--no-webui: the API is unchanged"


def test_stream_times(servers, files):
    """A streamed transcription's deltas carry their segment's times; its done
    event the answer in response_format (the page's downloads come from it)."""
    main, _ = servers
    data = open(files["path"]("speech.wav"), "rb").read()
    r = transcribe(main.port, data, filename="speech.wav", stream="true", response_format="verbose_json")
    events, err = ts.sse_events(r)
    plain = transcribe(main.port, data, filename="speech.wav", response_format="verbose_json").json() or {}
    assert not err and r.status == 200 and events, f"a streamed verbose_json: {err} {r!r}"
    deltas = [e for e in events if e.get("type") == "transcript.text.delta"]
    segs = [s for s in plain.get("segments", []) if s.get("text")]
    assert [(d.get("start"), d.get("end")) for d in deltas] == [(s["start"], s["end"]) for s in segs], (
            f"each delta has its segment's start and end: {deltas} vs {segs}")
    assert events[-1].get("response") == plain, "the done event has the verbose_json answer"
    r = transcribe(main.port, data, filename="speech.wav", stream="true", response_format="srt")
    events, _ = ts.sse_events(r)
    srt = transcribe(main.port, data, filename="speech.wav", response_format="srt").text
    assert events and events[-1].get("response") == srt, "response_format=srt: the done event has the SRT as a string"
    r = transcribe(main.port, data, filename="speech.wav", stream="true")
    events, _ = ts.sse_events(r)
    assert events and "response" not in events[-1], "response_format json: the done event is OpenAI's"


# ---------------------------------------------------------------- in the browser

def test_page_loads(page):
    res = scenario(page, "load")
    assert res.get("console_errors") == [] and res.get("page_errors") == [], (
            f"the page loads without console errors: {res.get('console_errors')} {res.get('page_errors')}")
    assert res.get("external") == [], f"the page fetches nothing from elsewhere: {res.get('external')}"
    assert res.get("shown_hidden") == [], f"hidden parts are not shown: {res.get('shown_hidden')}"
    assert res.get("asr_models") == ["hviske"] and res.get("voices") == ["alice", "bob"], (
            f"the served models and voices are listed: {res}")
    assert "zero_shot_tts" in res.get("speak_routes", []) and "style_preserved_vc" in res.get("convert_routes", []), (
            f"the voice model's routes are offered: {res.get('speak_routes')} {res.get('convert_routes')}")


def test_transcribe_file(page, files, servers, audioc):
    res = scenario(page, "transcribe_file")
    speech = files["path"]("speech.wav")
    assert res.get("error") is None, f"transcription on the page: {res.get('error')}"
    want = {}
    for fmt in ("txt", "srt", "vtt"):
        rc, out, err = testenv.audioc("transcribe", "-m", testenv.BUNDLED_MODEL, "--vad", VAD, "--format",
                                      "text" if fmt == "txt" else fmt, speech)
        assert rc == 0, f"audioc transcribe --format {fmt}: {err}"
        want[fmt] = out
    segs = res.get("segments", [])
    assert len(segs) == 2 and all(s["text"] and s["end"] > s["start"] for s in segs), (
            f"two segments with text and times: {segs}")
    assert res.get("streamed", 0) >= 2, f"the segments appeared as they were streamed ({res.get('streamed')} before done)"
    assert all(" – " in s["time"] for s in segs), f"each segment shows its times: {segs}"
    dl = res.get("downloads", {})
    for fmt in ("txt", "srt", "vtt"):
        assert dl.get(fmt) == want[fmt], f"the {fmt.upper()} download is audioc transcribe's:\n{dl.get(fmt)!r}\n{want[fmt]!r}"
    main, _ = servers
    verbose = transcribe(main.port, open(speech, "rb").read(), filename="speech.wav",
                         response_format="verbose_json").json()
    assert json.loads(dl.get("json") or "null") == verbose, "the JSON download is the server's verbose_json"
    assert res.get("highlight") is True, "playing marks the segment being played"
    assert res.get("phone_overflow", 1) <= 0, "the transcript fits a phone's width"
    assert res.get("console_errors") == [] and res.get("external") == [], (
            f"no console errors, nothing fetched elsewhere: {res.get('console_errors')} {res.get('external')}")


def test_words(page, files, servers):
    res = scenario(page, "words")
    main, _ = servers
    want = transcribe(main.port, open(files["path"]("speech.wav"), "rb").read(), filename="speech.wav",
                      response_format="verbose_json", timestamp_granularities__=["segment", "word"]).json() or {}
    words = [{"word": w["word"], "start": w["start"], "end": w["end"]} for w in want.get("words", [])]
    assert res.get("error") is None and words and res.get("words") == words, (
            f"word timestamps: a span per word with its times ({res.get('words')} vs {words})")
    m = res.get("marked") or {}
    assert m.get("played") and m.get("marked") == [m["played"]], f"playing marks the word being played: {m}"


def test_bad_file(page, files, servers):
    res = scenario(page, "bad_file")
    main, _ = servers
    want = transcribe(main.port, open(files["path"]("notes.wav"), "rb").read(), filename="notes.wav").json()
    msg = ((want or {}).get("error") or {}).get("message")
    assert msg and res.get("error") == msg, f"the server's message is shown: {res.get('error')!r} (want {msg!r})"
    main.survived("a file that is not audio")


def test_cancel(page, servers, files):
    res = scenario(page, "cancel")
    main, _ = servers
    assert res.get("running") and res.get("status") == "Cancelled." and res.get("error") is None and res.get("go_enabled"), (
            f"Cancel while the work runs: the page says so and can start again ({res})")
    log = ""
    for _ in range(100):
        log = main.stderr()
        if "POST /v1/audio/transcriptions 499" in log:
            break
        time.sleep(0.1)
    assert "POST /v1/audio/transcriptions 499" in log, (
            f"the server saw the browser hang up (499 in its log): {log[-1500:]}")
    t0 = time.time()
    r = transcribe(main.port, open(files["path"]("clip.wav"), "rb").read())
    print(f"  the next request after the cancel took {time.time() - t0:.2f} s")
    assert r.status == 200, f"the next request is answered: {r!r}"


def test_microphone(page):
    res = scenario(page, "microphone")
    assert res.get("error") is None and "recording.webm" in res.get("recorded", ""), (
            f"a recording from the (fake) microphone, as WebM: {res}")
    assert res.get("text", "").strip(), f"the recording is transcribed: {res}"


def wav_b64(res, what):
    assert res and not res.get("error"), f"{what}: {res and res.get('error')}"
    return base64.b64decode(res.get("base64", ""))


def test_speak(page, servers):
    res = scenario(page, "speak")
    main, _ = servers
    body = dict(SPEAK, model="v", route="zero_shot_tts", response_format="wav")
    r = request(main.port, "POST", "/v1/audio/speech", json.dumps(body).encode(), {"Content-Type": "application/json"})
    assert r.status == 200, f"/v1/audio/speech: {r!r}"
    n = (len(r.body) - 44) / 2 / 24000
    for kind in ("whole", "streamed"):
        got = wav_b64(res.get(kind), f"speech ({kind})")
        assert got == r.body, (f"speech ({kind}): the download is /v1/audio/speech's bytes for the same seed "
                               f"({len(got)} vs {len(r.body)} bytes)")
        assert abs(res[kind].get("duration", 0) - n) < 1e-3 and n > 0, (
                f"speech ({kind}): the page decodes {res[kind].get('duration')} s (want {n:.3f})")
    assert res.get("page_errors") == [] and res.get("console_errors") == [], (
            f"speech: no errors in the page: {res.get('page_errors')} {res.get('console_errors')}")


def test_speak_upload(page, servers):
    """The served voice alice is voice.wav with VOICE_TEXT: uploading both gives the same speech."""
    res = scenario(page, "speak_upload")
    main, _ = servers
    body = dict(SPEAK, model="v", route="zero_shot_tts", response_format="wav")
    r = request(main.port, "POST", "/v1/audio/speech", json.dumps(body).encode(), {"Content-Type": "application/json"})
    assert r.status == 200 and wav_b64(res, "speech in an uploaded voice") == r.body, (
            f"speech in an uploaded reference with its transcript: the served voice's bytes ({r!r})")


def test_convert(page, files, servers):
    res = scenario(page, "convert")
    main, _ = servers
    src = open(files["path"]("voice.wav"), "rb").read()
    body, ctype = multipart([("voice", "bob"), ("model", "v"), ("route", "style_preserved_vc"),
                             ("response_format", "wav"), ("seed", "5")], [("file", "voice.wav", src)])
    r = request(main.port, "POST", "/v1/audio/conversions", body, {"Content-Type": ctype})
    assert r.status == 200 and wav_b64(res, "conversion") == r.body, (
            f"the conversion's download is /v1/audio/conversions' bytes ({r!r})")


def test_convert_recording(page):
    res = scenario(page, "convert_recording")
    assert res.get("error") is None and res.get("duration", 0) > 0.5 and res.get("name", "").endswith(".wav"), (
            f"a recording from the microphone converted, played and offered as WAV: {res}")


def test_api_key(page):
    res = scenario(page, "api_key")
    msg = "invalid or missing API key"
    assert msg in (res.get("first") or "") and res.get("focused") == "key-input", (
            f"the page asks for the key with the server's 401 message, the key field focused: {res}")
    assert msg in (res.get("wrong") or ""), f"a wrong key: asked again with the server's message: {res}"
    assert "1 model" in (res.get("after") or ""), f"the right key: the models are listed: {res}"
    assert res.get("kept") == {"dialog": False, "stored": KEY}, f"the key is kept in the browser: {res}"


def test_keyboard(page):
    res = scenario(page, "keyboard")
    assert res.get("unlabelled") == [] and res.get("nameless_buttons") == [], (
            f"every field has a label, every button a name: {res.get('unlabelled')} {res.get('nameless_buttons')}")
    assert res.get("positive_tabindex") == [], "no positive tabindex: Tab follows the document"
    for panel, p in res.get("panels", {}).items():
        assert p["shown"], f"the {panel} panel is chosen with the arrow keys"
        assert p["reached"] == p["want"], f"Tab reaches every control of {panel} in order: {p['reached']} vs {p['want']}"
    assert len(res.get("panels", {})) == 3, "three panels"


def test_phone(page):
    res = scenario(page, "phone")
    for panel in ("transcribe", "speak", "convert"):
        assert res.get(panel, 1) <= 0, f"{panel} on a 375 px wide phone: {res.get(panel)} px of sideways scrolling"


def test_subpath(page):
    res = scenario(page, "subpath")
    assert res.get("error") is None and len(res.get("segments", [])) == 2, (
            f"behind a proxy at {PREFIX}/: the page lists the models and transcribes ({res})")
    assert res.get("outside") == [] and res.get("console_errors") == [], (
            f"behind a proxy at {PREFIX}/: no request leaves the sub-path ({res.get('outside')}, "
            f"{res.get('console_errors')})")


# Firefox takes some 20 s to start here: the scenarios that could differ between browsers only
FIREFOX_SCENARIOS = ["load", "words", "bad_file", "speak", "keyboard"]


def test_firefox(page, files, servers, server_work):
    """The same page in Firefox (ESR, through WebDriver BiDi): loads clean, transcribes
    with word times (streamed, played, marked), shows the server's error, plays and
    offers speech byte for byte (streamed and whole), and Tab reaches every control.
    Skipped without firefox-esr."""
    firefox = shutil.which("firefox-esr") or shutil.which("firefox")
    if not firefox:
        pytest.skip("no Firefox: install Debian's firefox-esr (scripts/setup.sh) to test the page in it too")
    shots = os.path.join(server_work, "screenshots", "firefox")
    os.makedirs(shots, exist_ok=True)
    cfg = dict(page["_cfg"], firefox=firefox, shots=shots, scenarios=FIREFOX_SCENARIOS)
    ff = drive(cfg, files["path"]("web_firefox.json"))
    for name in FIREFOX_SCENARIOS:
        res = ff.get(name) or {}
        assert not (set(res) <= {"error", "seconds"} and res.get("error")), f"Firefox, {name}: {res.get('error')}"
    load = ff["load"]
    assert load.get("console_errors") == [] and load.get("page_errors") == [] and load.get("external") == [], (
            f"Firefox: the page loads clean ({load.get('console_errors')} {load.get('page_errors')} {load.get('external')})")
    assert load.get("voices") == ["alice", "bob"] and load.get("shown_hidden") == [], f"Firefox: the lists ({load})"
    for name, keys in (("words", ("error", "segments", "words", "streamed", "marked")), ("bad_file", ("error",))):
        for k in keys:
            got, want = ff[name].get(k), (page.get(name) or {}).get(k)
            assert got == want, f"Firefox, {name}: {k} as in Chromium ({str(got)[:300]} vs {str(want)[:300]})"
    for kind in ("whole", "streamed"):
        got, want = ff["speak"].get(kind) or {}, (page.get("speak") or {}).get(kind) or {}
        assert got.get("base64") and got.get("base64") == want.get("base64") and got.get("duration") == want.get("duration"), (
                f"Firefox, speech ({kind}): the bytes and duration of Chromium's ({got.get('error')})")
    for panel, p in ff["keyboard"].get("panels", {}).items():
        assert p["reached"] == p["want"], f"Firefox: Tab reaches every control of {panel}: {p}"
