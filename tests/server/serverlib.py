"""What the audioc-server tests share: the tiny packages and clips (Assets)
with the CLI's answers for them, an HTTP client that never raises, a server
process on a free port, and the checks of an answer (an OpenAI error object,
a text, a verbose_json, an event stream). WORK is the test file's own folder
(set by the assets fixture of conftest.py)."""
import http.client
import json
import os
import select
import signal
import socket
import subprocess
import threading

import pytest

import packages
import testenv
from testenv import SANITIZED, SILERO, audioc

WORK = os.path.join(testenv.WORK, "server")
SLOW = 10 if SANITIZED else 1          # sanitizers make everything slower
HTTP_TIMEOUT = 120 * SLOW
SAMPLES = sorted(os.path.join(testenv.ROOT, "samples", f) for f in os.listdir(os.path.join(testenv.ROOT, "samples"))
                 if f.endswith(".flac"))
START_TIMEOUT = 60 * (3 if SANITIZED else 1)
SERVER_ENV = ("AUDIOC_HOST", "AUDIOC_PORT", "AUDIOC_MODELS", "AUDIOC_THREADS", "AUDIOC_WORKERS",
              "AUDIOC_MAX_UPLOAD_MB", "AUDIOC_MAX_QUEUE", "AUDIOC_API_KEY", "AUDIOC_CORS",
              "AUDIOC_ASR_MODEL")


# ---------------------------------------------------------------- assets

class Assets:
    """Model packages and audio clips under WORK, and the CLI's answers for them."""

    def __init__(self):
        self.work = WORK
        self._cache = {}
        self._lock = threading.Lock()

    def path(self, name):
        return os.path.join(self.work, name)

    def build(self):
        self.tiny, self.tiny2 = packages.hviske(0), packages.hviske(1)
        self.gguf = packages.hviske_gguf("q8_0")
        p = self.path
        sh("espeak-ng", "-v", "da", "-w", p("raw1.wav"), "Hej med dig, hvordan går det i dag?")
        sh("espeak-ng", "-v", "da", "-w", p("raw2.wav"), "Vejret er godt, og solen skinner over byen.")
        sh("sox", "-D", p("raw1.wav"), "-r", "16000", "-b", "16", p("clip.wav"))      # ~2 s
        sh("sox", "-D", p("raw2.wav"), "-r", "16000", "-b", "16", p("clip2.wav"))     # ~3 s
        sh("sox", "-n", "-r", "16000", "-c", "1", "-b", "16", p("sil6.wav"), "trim", "0", "6")
        # speech, 6 s of silence, speech: the VAD drops the middle
        sh("sox", "-D", p("clip.wav"), p("sil6.wav"), p("clip2.wav"), p("gap.wav"))
        sh("sox", "-D", *[p("clip.wav")] * 8, p("mid.wav"))                          # ~16 s, 0.5 MB
        sh("sox", "-D", *[p("clip.wav")] * 32, p("big.wav"))                         # ~65 s, 2.1 MB
        sh("sox", "-D", *[p("mid.wav")] * 8, p("long.wav"))                          # ~130 s, 4.2 MB
        sh("sox", "-D", p("gap.wav"), "-r", "44100", "-c", "2", p("stereo44k.wav"))
        sh("sox", "-n", "-r", "16000", "-c", "1", "-b", "16", p("empty.wav"), "trim", "0", "0")
        for ext in ("flac", "mp3"):
            rc, _, err = audioc("convert", p("gap.wav"), p("gap." + ext))
            if rc != 0:
                raise RuntimeError(f"audioc convert to .{ext}: {err}")
        # what phones and browsers upload (FFmpeg decodes them)
        for name, codec in (("gap.m4a", "aac"), ("gap.webm", "libopus"), ("gap.aac", "aac")):
            sh("ffmpeg", "-loglevel", "error", "-y", "-i", p("gap.wav"), "-c:a", codec, p(name))
        with open(p("text.wav"), "w") as f:
            f.write("not audio\n" * 50)
        with open(p("clip.wav"), "rb") as f:
            clip = f.read()
        with open(p("trunc.wav"), "wb") as f:      # a WAV header cut short: no data chunk
            f.write(clip[:30])

    def bytes(self, name):
        with open(self.path(name), "rb") as f:
            return f.read()

    def asr(self, name, *args, model=None):
        """The CLI's JSON (with tokens) for audio NAME: what the server must say."""
        model = model or self.tiny
        key = ("asr", model, name, args)
        with self._lock:
            if key not in self._cache:
                rc, out, err = audioc("transcribe", "-m", model, "--format", "json", "--tokens", *args,
                                      self.path(name))
                self._cache[key] = json.loads(out) if rc == 0 else {"rc": rc, "err": err}
            return self._cache[key]

    def asr_text(self, name, *args, model=None):
        j = self.asr(name, *args, model=model)
        return j.get("text", f"<CLI failed: {j.get('err', '').strip()}>")

    def asr_format(self, name, fmt, *args):
        key = ("fmt", name, fmt, args)
        with self._lock:
            if key not in self._cache:
                rc, out, err = audioc("transcribe", "-m", self.tiny, "--format", fmt, *args, self.path(name))
                self._cache[key] = out if rc == 0 else f"<CLI failed: {err.strip()}>"
            return self._cache[key]

    def vad(self, name, *args):
        key = ("vad", name, args)
        with self._lock:
            if key not in self._cache:
                rc, out, err = audioc("vad", "--model", SILERO, "--format", "json", *args, self.path(name))
                self._cache[key] = json.loads(out) if rc == 0 else {"rc": rc, "err": err}
            return self._cache[key]


# the VAD settings of a transcription (ac_asr_vad_options_default) for audioc vad
ASR_VAD = ("--speech-pad-ms", "400", "--min-silence-ms", "500", "--max-speech-s", "30")


def sh(*cmd):
    subprocess.run(cmd, check=True, capture_output=True)


# ---------------------------------------------------------------- HTTP client

class Resp:
    def __init__(self, status, headers, body, error=None):
        self.status, self.headers, self.body, self.error = status, headers, body, error

    @property
    def text(self):
        return self.body.decode("utf-8", "replace")

    def json(self):
        try:
            return json.loads(self.body)
        except (ValueError, UnicodeDecodeError):
            return None

    def header(self, name):
        return self.headers.get(name.lower(), "")

    def __repr__(self):
        if self.error:
            return f"<no response: {self.error}>"
        return f"<{self.status} {self.text[:300]!r}>"


def request(port, method, path, body=None, headers=None, timeout=HTTP_TIMEOUT, conn=None):
    """One HTTP request; a connection failure gives status 0 (never raises)."""
    c = conn or http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        c.request(method, path, body=body, headers=headers or {})
        r = c.getresponse()
        data = r.read()
        return Resp(r.status, {k.lower(): v for k, v in r.getheaders()}, data)
    except (OSError, http.client.HTTPException) as e:
        return Resp(0, {}, b"", error=repr(e))
    finally:
        if conn is None:
            c.close()


def multipart(fields=(), files=(), boundary=None):
    """OpenAI-style multipart/form-data: FIELDS are (name, value) pairs (repeats
    allowed), FILES (name, filename, bytes). Returns (body, content type)."""
    b = boundary or "audioc-test-" + os.urandom(8).hex()
    parts = []
    for name, value in fields:
        parts.append(f'--{b}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'.encode()
                     + str(value).encode() + b"\r\n")
    for name, filename, data in files:
        ctype = "audio/wav" if filename.endswith(".wav") else "application/octet-stream"
        parts.append(f'--{b}\r\nContent-Disposition: form-data; name="{name}"; filename="{filename}"\r\n'
                     f'Content-Type: {ctype}\r\n\r\n'.encode() + data + b"\r\n")
    return b"".join(parts) + f"--{b}--\r\n".encode(), f"multipart/form-data; boundary={b}"


def auth_headers(key):
    return {"Authorization": f"Bearer {key}"} if key else {}


def post_audio(port, endpoint, data, filename="audio.wav", key=None, conn=None, extra_headers=None,
               **fields):
    files = [("file", filename, data)] if data is not None else []
    flist = []
    for k, v in fields.items():
        if isinstance(v, (list, tuple)):
            flist += [(k.replace("__", "[]"), x) for x in v]
        else:
            flist.append((k, v))
    body, ctype = multipart(flist, files)
    headers = {"Content-Type": ctype, **auth_headers(key), **(extra_headers or {})}
    return request(port, "POST", endpoint, body, headers, conn=conn)


def free_port():
    """A TCP port free on 127.0.0.1 (for a server or proxy the test starts)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def transcribe(port, data, **kw):
    return post_audio(port, "/v1/audio/transcriptions", data, **kw)


def vad(port, data, **kw):
    return post_audio(port, "/v1/audio/vad", data, **kw)


def raw_exchange(port, head, body=b"", chunked=False, timeout=HTTP_TIMEOUT):
    """Sends HEAD and BODY over a raw socket, stopping the upload as soon as the
    server answers (as a 413 may come early); returns (status, response bytes)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    data = b""
    try:
        s.sendall(head)
        for i in range(0, len(body), 65536):
            if select.select([s], [], [], 0)[0]:
                break
            piece = body[i:i + 65536]
            s.sendall(b"%x\r\n" % len(piece) + piece + b"\r\n" if chunked else piece)
        else:
            if chunked:
                s.sendall(b"0\r\n\r\n")
    except (BrokenPipeError, ConnectionResetError):
        pass
    try:
        while True:
            b = s.recv(65536)
            if not b:
                break
            data += b
            hdr_end = data.find(b"\r\n\r\n")
            if hdr_end >= 0:
                for line in data[:hdr_end].split(b"\r\n")[1:]:
                    k, _, v = line.partition(b":")
                    if k.strip().lower() == b"content-length" and len(data) >= hdr_end + 4 + int(v):
                        raise StopIteration
    except StopIteration:
        pass
    except (ConnectionResetError, socket.timeout, OSError):
        pass
    finally:
        s.close()
    try:
        status = int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/") else 0
    except (IndexError, ValueError):
        status = 0
    return status, data


def proc_status_kb(pid, key):
    """A kB figure of /proc/PID/status (VmRSS, VmHWM, ...); 0 when gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def vmrss_kb(pid):
    return proc_status_kb(pid, "VmRSS")


# ---------------------------------------------------------------- server process

def base_env():
    env = {k: v for k, v in os.environ.items() if k not in SERVER_ENV}
    return env


class Server:
    """An audioc-server process on a free port; stderr goes to WORK/NAME.log."""

    def __init__(self, name, args, env=None, listen=True):
        self.name = name
        self.log_path = os.path.join(WORK, name + ".log")
        self.log = open(self.log_path, "w")
        self.args = list(args) + (["--host", "127.0.0.1", "--port", "0"] if listen else [])
        self.proc = subprocess.Popen([testenv.AUDIOC_SERVER, *self.args], stdout=subprocess.PIPE, stderr=self.log,
                                     env=env if env is not None else base_env())
        self.lines = []
        self.signalled = self.stopped = False
        self.ready = threading.Event()
        threading.Thread(target=self._read_stdout, daemon=True).start()
        self.port = None
        self.ready.wait(START_TIMEOUT)
        first = self.lines[0] if self.lines else ""
        prefix = "audioc-server: listening on http://127.0.0.1:"
        if first.startswith(prefix) and first[len(prefix):].isdigit():
            self.port = int(first[len(prefix):])
        if not (self.port is not None and self.port > 0):
            msg = (f"[{name}] prints 'audioc-server: listening on http://127.0.0.1:PORT' (got {first!r}; "
                   f"exit {self.proc.poll()}; stderr: {self.stderr()[-500:]!r})")
            self.proc.kill()
            self.proc.wait()
            self.log.close()
            pytest.fail(msg)

    def _read_stdout(self):
        for line in iter(self.proc.stdout.readline, b""):
            self.lines.append(line.decode("utf-8", "replace").rstrip("\n"))
            self.ready.set()
        self.ready.set()

    @property
    def ok(self):
        return self.port is not None

    @property
    def pid(self):
        return self.proc.pid

    def stderr(self):
        self.log.flush()
        try:
            with open(self.log_path, encoding="utf-8", errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def alive(self):
        return self.proc.poll() is None

    def survived(self, what):
        """After a bad request: the process lives and /health answers 200."""
        r = request(self.port, "GET", "/health")
        assert self.alive() and r.status == 200, (
                f"[{self.name}] server survives {what} (alive {self.alive()}, health {r!r})")

    def terminate(self):
        if not self.signalled:
            self.signalled = True
            self.proc.send_signal(signal.SIGTERM)

    def stop(self):
        """SIGTERM: exit 0 within a few seconds, no sanitizer report."""
        if self.stopped:
            return
        self.stopped = True
        if self.proc.poll() is None:
            self.terminate()
            try:
                self.proc.wait(10 * (3 if SANITIZED else 1))
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                pytest.fail(f"[{self.name}] SIGTERM: still running after the grace period (killed)")
        rc = self.proc.returncode
        err = self.stderr()
        assert rc == 0, f"[{self.name}] SIGTERM: exit status {rc} (want 0); stderr tail: {err[-800:]!r}"
        assert "Sanitizer" not in err and "runtime error" not in err, (
                f"[{self.name}] no sanitizer report in stderr: {err[-1500:]!r}")
        self.log.close()


def wait_all(threads):
    for t in threads:
        t.start()
    for t in threads:
        t.join()


# ---------------------------------------------------------------- checks

def check_error(srv, r, status, what, param=None):
    """A bad request: the right status and an OpenAI error object, and the server lives on."""
    assert r.status == status, f"[{srv.name}] {what}: status {r.status} (want {status}); {r!r}"
    j = r.json()
    e = j.get("error") if isinstance(j, dict) else None
    assert (isinstance(e, dict) and isinstance(e.get("message"), str) and e["message"].strip() != ""
            and all(k in e for k in ("type", "param", "code"))), (
            f"[{srv.name}] {what}: error JSON {{error: {{message, type, param, code}}}}: {r.text[:300]!r}")
    assert r.header("content-type").startswith("application/json"), (
            f"[{srv.name}] {what}: error Content-Type is application/json ({r.header('content-type')!r})")
    if param is not None and isinstance(e, dict):
        assert e.get("param") == param, f"[{srv.name}] {what}: error param {e.get('param')!r} (want {param!r})"
    srv.survived(what)


def check_text(srv, r, want, what):
    j = r.json()
    got = j.get("text") if isinstance(j, dict) else None
    assert r.status == 200 and got == want, f"[{srv.name}] {what}: text {got!r} (want {want!r}); {r!r}"



def check_verbose(srv, r, want, what, temperature):
    j = r.json() or {}
    assert r.status == 200 and j.get("task") == "transcribe" and j.get("language") == "da", (
            f"[{srv.name}] {what}: task/language ({r!r})")
    assert j.get("text") == want.get("text"), f"[{srv.name}] {what}: text {j.get('text')!r} (want {want.get('text')!r})"
    assert isinstance(j.get("duration"), (int, float)) and abs(j["duration"] - want.get("duration", -9)) < 2e-3, (
            f"[{srv.name}] {what}: duration {j.get('duration')} (want {want.get('duration')})")
    segs, wsegs = j.get("segments") or [], want.get("segments") or []
    assert len(segs) == len(wsegs), f"[{srv.name}] {what}: {len(segs)} segments (want {len(wsegs)})"
    for i, (s, w) in enumerate(zip(segs, wsegs)):
        ok = (s.get("id") == i and isinstance(s.get("seek"), int) and s.get("text") == w["text"]
              and abs(s.get("start", -9) - w["start"]) < 2e-3 and abs(s.get("end", -9) - w["end"]) < 2e-3
              and s.get("tokens") == w.get("tokens")
              and abs(s.get("avg_logprob", 9) - w["avg_logprob"]) < 1e-4
              and abs(s.get("temperature", -9) - temperature) < 1e-6)
        assert ok, f"[{srv.name}] {what}: segment {i} {s} (want {w}, temperature {temperature})"


def sse_events(r):
    """(events, error) of a text/event-stream body."""
    events = []
    body = r.text
    if not body.endswith("\n\n"):
        return events, f"body does not end with a blank line: {body[-100:]!r}"
    for block in body.split("\n\n")[:-1]:
        lines = [ln for ln in block.split("\n") if ln and not ln.startswith(":")]
        if len(lines) != 1 or not lines[0].startswith("data: "):
            return events, f"not a 'data: ' event: {block[:200]!r}"
        try:
            events.append(json.loads(lines[0][6:]))
        except ValueError:
            return events, f"event data is not JSON: {lines[0][:200]!r}"
    return events, None


def check_stream(srv, r, want, n_segments, what):
    assert r.status == 200 and r.header("content-type").startswith("text/event-stream"), (
            f"[{srv.name}] {what}: 200 text/event-stream ({r.status}, {r.header('content-type')!r}, {r.text[:200]!r})")
    events, err = sse_events(r)
    assert err is None, f"[{srv.name}] {what}: SSE framing: {err}"
    if not events:
        pytest.fail(f"[{srv.name}] {what}: no events")
        return
    deltas = events[:-1]
    done = events[-1]
    assert all(e.get("type") == "transcript.text.delta" and isinstance(e.get("delta"), str) for e in deltas), (
            f"[{srv.name}] {what}: delta events {deltas[:3]}")
    assert done.get("type") == "transcript.text.done" and done.get("text") == want, (
            f"[{srv.name}] {what}: done event {done} (want text {want!r})")
    assert "".join(e.get("delta", "") for e in deltas) == want, (
            f"[{srv.name}] {what}: deltas join to the text ({[e.get('delta') for e in deltas]})")
    assert len(deltas) <= n_segments and (n_segments == 0 or len(deltas) >= 1) and (n_segments < 2 or len(deltas) >= 2), (
            f"[{srv.name}] {what}: one delta per finished segment ({len(deltas)} deltas, {n_segments} segments)")


def module_server(name, args):
    """A server shared by a file's tests: started at the first, stopped after the last."""
    @pytest.fixture(scope="module")
    def fixture(assets):
        srv = Server(name, args(assets) if callable(args) else args)
        yield srv
        srv.stop()
    return fixture
