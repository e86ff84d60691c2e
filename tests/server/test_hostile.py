"""audioc-server against hostile clients (loopback only, bounded in time):
hundreds of idle, slow-header and slow-body connections from several
addresses while a normal client keeps getting its answers in its usual time;
the per-address connection limit; refusals answered before the body is
read (an unknown Expect among them); no forged log lines; the API key's scheme; non-finite audio; a graceful stop with a deadline; the upload memory budget. Python stdlib only."""
import os
import selectors
import socket
import sys
import threading
import time

import testenv
import serverlib as ts
from serverlib import request, transcribe

SLOW = ts.SLOW


class Attack:
    """N connections of each kind (idle, slow head, slow body) from the
    addresses 127.0.0.2 .. 127.0.0.(1+ADDRS), reopened 0.2 s after the server
    drops them, until stopped. Counts the drops and how long each dropped
    connection had lived."""

    KINDS = ("idle", "slow_head", "slow_body")

    def __init__(self, port, per_kind, addrs):
        self.port, self.per_kind, self.addrs = port, per_kind, addrs
        self.sel = selectors.DefaultSelector()
        self.lives = {k: [] for k in self.KINDS}   # seconds each dropped connection lived
        self.refused = 0
        self.reopen = []   # (when, kind, index) of dropped connections, in time order
        self.stop_flag = False
        self.open_max = 0
        self.thread = threading.Thread(target=self.run, daemon=True)

    def open(self, kind, i):
        s = socket.socket()
        s.bind((f"127.0.0.{2 + i % self.addrs}", 0))
        s.setblocking(False)
        try:
            s.connect(("127.0.0.1", self.port))
        except BlockingIOError:
            pass
        except OSError:
            self.refused += 1
            s.close()
            return
        st = {"kind": kind, "i": i, "t0": time.time(), "next": time.time() + 0.2, "sent_head": False}
        self.sel.register(s, selectors.EVENT_READ, st)

    def tick(self, s, st, now):
        """The next slow byte or line, when due."""
        if st["kind"] == "idle" or now < st["next"]:
            return
        st["next"] = now + 1.0
        try:
            if st["kind"] == "slow_head":
                s.send(b"POST /v1/audio/transcriptions HTTP/1.1\r\n" if not st["sent_head"] else b"X-Slow: 1\r\n")
            elif not st["sent_head"]:
                s.send(b"POST /v1/audio/transcriptions HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n"
                       b"Content-Type: multipart/form-data; boundary=bnd\r\n\r\n--bnd\r\n")
            else:
                s.send(b"x")
            st["sent_head"] = True
        except OSError:
            pass

    def run(self):
        for kind in self.KINDS:
            for i in range(self.per_kind):
                self.open(kind, i)
        while not self.stop_flag:
            now = time.time()
            for key, _ in self.sel.select(timeout=0.1):
                s, st = key.fileobj, key.data
                try:
                    data = s.recv(4096)
                except (BlockingIOError, InterruptedError):
                    continue
                except OSError:
                    data = b""
                if data:
                    continue   # an answer (e.g. a 408): the close follows
                self.sel.unregister(s)
                s.close()
                self.lives[st["kind"]].append(time.time() - st["t0"])
                # back again soon: holding connections, not a flood of connects
                self.reopen.append((time.time() + 0.2, st["kind"], st["i"]))
            while self.reopen and self.reopen[0][0] <= now:
                _, kind, i = self.reopen.pop(0)
                self.open(kind, i)
            for key in list(self.sel.get_map().values()):
                self.tick(key.fileobj, key.data, now)
            self.open_max = max(self.open_max, len(self.sel.get_map()))
        for key in list(self.sel.get_map().values()):
            key.fileobj.close()

    def start(self):
        self.thread.start()

    def stop(self):
        self.stop_flag = True
        self.thread.join()


def normal_client(a, port, seconds):
    """Health checks and transcriptions for SECONDS: (statuses, worst latency
    of each kind)."""
    clip = a.bytes("clip.wav")
    want = a.asr_text("clip.wav")
    statuses, worst = [], {"health": 0.0, "transcribe": 0.0}
    t_end = time.time() + seconds
    while time.time() < t_end:
        t = time.time()
        r = request(port, "GET", "/health", timeout=30 * SLOW)
        worst["health"] = max(worst["health"], time.time() - t)
        statuses.append(("health", r.status, r.error))
        t = time.time()
        r = transcribe(port, clip)
        worst["transcribe"] = max(worst["transcribe"], time.time() - t)
        ok = r.status == 200 and (r.json() or {}).get("text") == want
        statuses.append(("transcribe", 200 if ok else r.status, r.error))
        time.sleep(0.2)
    return statuses, worst


def slow_clients(a, start_server, name, args, per_kind, addrs, header_timeout):
    srv = start_server(name, ["--model", f"tiny={a.tiny}", "--threads", "2", *args])
    _, base = normal_client(a, srv.port, 2)                       # the usual time, unloaded
    attack = Attack(srv.port, per_kind, addrs)
    attack.start()
    time.sleep(1.0)
    statuses, worst = normal_client(a, srv.port, header_timeout + 5)
    attack.stop()
    bad = [s for s in statuses if s[1] != 200]
    assert not bad and len(statuses) >= 4, (
            f"[{name}] {3 * per_kind} slow/idle connections: every normal request answered 200 "
            f"({len(statuses)} requests, not 200: {bad[:5]})")
    for kind in ("health", "transcribe"):
        limit = max(2.0 * SLOW, 3 * base[kind] + 1.0 * SLOW)   # unprotected, they took 30-120 s
        assert worst[kind] <= limit, (f"[{name}] under attack, the slowest {kind} took {worst[kind]:.2f} s "
                                      f"(usual {base[kind]:.2f} s, limit {limit:.2f} s)")
    for kind in ("idle", "slow_head", "slow_body"):
        lives = attack.lives[kind]
        assert len(lives) >= per_kind // 2, f"[{name}] {kind} connections are dropped ({len(lives)} of {per_kind})"
        # dropped at the deadline (or earlier, to make room), never much later
        late = [t for t in lives if t > header_timeout + 2.0 * SLOW]
        assert not late, f"[{name}] {kind} connections live at most ~{header_timeout} s: {sorted(late)[-3:]}"
    srv.survived(f"{3 * per_kind} slow and idle connections")
    srv.stop()


def test_per_client_limit(assets, start_server):
    a = assets
    srv = start_server("per_client", ["--model", f"tiny={a.tiny}", "--max-connections-per-client", "8",
                                "--header-timeout", "30"])
    socks = []
    for _ in range(20):
        s = socket.socket()
        s.bind(("127.0.0.60", 0))
        s.connect(("127.0.0.1", srv.port))
        s.settimeout(0.5)
        socks.append(s)
    time.sleep(0.5)
    closed = 0
    for s in socks:
        try:
            closed += s.recv(1) == b""
        except socket.timeout:
            pass
        except OSError:
            closed += 1
    assert closed == 12, f"[per_client] 20 connections from one address, limit 8: {closed} closed at once (want 12)"
    r = request(srv.port, "GET", "/health")   # another address (127.0.0.1) is not affected
    assert r.status == 200, f"[per_client] other addresses are served meanwhile ({r!r})"
    for s in socks:
        s.close()
    srv.stop()


def test_early_answers(assets, start_server):
    """Refusals known from the head are answered at once, with the body unread."""
    a = assets
    srv = start_server("early", ["--model", f"tiny={a.tiny}", "--api-key", "k", "--max-upload-mb", "1"])
    heads = {
        "404 unknown path": (b"POST /v1/nope HTTP/1.1\r\nHost: x\r\nContent-Length: 2000000000\r\n\r\n", 404),
        "401 no API key": (b"POST /v1/audio/transcriptions HTTP/1.1\r\nHost: x\r\nContent-Length: 2000000000\r\n"
                           b"Content-Type: multipart/form-data; boundary=bnd\r\n\r\n", 401),
        "413 over the limit": (b"POST /v1/audio/transcriptions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\n"
                               b"Content-Length: 2000000000\r\nContent-Type: multipart/form-data; boundary=bnd\r\n\r\n",
                               413),
        "400 not multipart": (b"POST /v1/audio/transcriptions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\n"
                              b"Content-Length: 100000\r\nContent-Type: application/json\r\n\r\n", 400),
        "417 an unknown expectation": (b"POST /v1/audio/transcriptions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\n"
                                       b"Expect: 200-ok\r\nContent-Length: 100000\r\n"
                                       b"Content-Type: multipart/form-data; boundary=bnd\r\n\r\n", 417),
    }
    for what, (head, status) in heads.items():
        s = socket.create_connection(("127.0.0.1", srv.port))
        s.settimeout(5 * SLOW)
        t = time.time()
        s.sendall(head + b"--b\r\n")   # a little of the body, never the rest
        try:
            got = s.recv(4096)
        except socket.timeout:
            got = b""
        took = time.time() - t
        line = got.split(b"\r\n", 1)[0].decode("latin-1")
        assert line.startswith(f"HTTP/1.1 {status}") and took < 1.0 * SLOW, (
                f"[early] {what}: answered at once ({line!r} after {took:.2f} s)")
        assert b"connection: close" in got.lower(), f"[early] {what}: with Connection: close ({got[:300]!r})"
        s.close()
    srv.survived("refusals before the body")
    srv.stop()


def test_log_and_key(assets, start_server):
    """Request paths cannot forge log lines; the API key's scheme is case-insensitive."""
    a = assets
    srv = start_server("hygiene", ["--model", f"tiny={a.tiny}", "--api-key", "s3cret"])
    forged = "GET /v1/admin 200 1.000 s"
    r = request(srv.port, "GET", "/health%0A" + forged.replace(" ", "%20"))
    assert r.status == 404, f"[hygiene] a path with an encoded newline: 404 ({r!r})"
    raw = socket.create_connection(("127.0.0.1", srv.port))
    raw.sendall(b"GET /health\x1b[2J\x07 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    raw.recv(4096)
    raw.close()
    time.sleep(0.2)
    log = srv.stderr().splitlines()
    assert forged not in log and not any(line.startswith("GET /v1/admin") for line in log), (
            f"[hygiene] no forged log line: {log[-4:]}")
    assert not any("\x1b" in line or "\x07" in line for line in log), (
            f"[hygiene] control bytes are escaped in the log: {[l for l in log if 'health' in l]}")
    for scheme, key, status in (("Bearer", "s3cret", 200), ("bearer", "s3cret", 200), ("BEARER", "s3cret", 200),
                                ("Bearer", "s3cre", 401), ("Bearer", "s3cret0", 401), ("Bearer", "", 401),
                                ("Basic", "s3cret", 401)):
        r = request(srv.port, "GET", "/v1/models", headers={"Authorization": f"{scheme} {key}"})
        assert r.status == status, f"[hygiene] Authorization: {scheme} {key!r}: {r.status} (want {status})"
    srv.stop()


def test_non_finite(assets, start_server):
    """Uploads of NaN or infinite samples are refused with 400, not answered with invented text."""
    a = assets
    sys.path.insert(0, os.path.join(testenv.ROOT, "tests", "cli"))
    from test_bad_input import write_float_wav
    srv = start_server("non_finite", ["--model", f"tiny={a.tiny}"])
    for bad in (float("nan"), float("inf")):
        write_float_wav(a.path("bad.wav"), 16000, 1, [0.1] * 8000 + [bad] + [0.0] * 7999)
        r = transcribe(srv.port, a.bytes("bad.wav"), filename="bad.wav")
        msg = ((r.json() or {}).get("error") or {}).get("message", "")
        assert r.status == 400 and "not a finite number" in msg, (
                f"[non_finite] a float WAV with {bad}: 400 naming the problem ({r!r})")
    srv.survived("non-finite uploads")
    srv.stop()


def test_shutdown_deadline(assets, start_server):
    """SIGTERM with a client uploading at 1 byte per second: new clients are
    a = assets
    refused at once, and the server exits 0 at --shutdown-timeout."""
    a = assets
    srv = start_server("shutdown", ["--model", f"tiny={a.tiny}", "--shutdown-timeout", "2", "--min-upload-rate", "0",
                              "--header-timeout", "60"])
    slow = socket.create_connection(("127.0.0.1", srv.port))
    slow.sendall(b"POST /v1/audio/transcriptions HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n"
                 b"Content-Type: multipart/form-data; boundary=bnd\r\n\r\n--bnd\r\n")
    stop = threading.Event()

    def trickle():
        while not stop.is_set():
            try:
                slow.send(b"x")
            except OSError:
                return
            stop.wait(1.0)

    t = threading.Thread(target=trickle, daemon=True)
    t.start()
    time.sleep(0.5)
    t0 = time.time()
    srv.terminate()
    time.sleep(0.5)
    try:
        c = socket.create_connection(("127.0.0.1", srv.port), timeout=2)
        c.close()
        refused = False
    except OSError:
        refused = True
    assert refused, "[shutdown] after SIGTERM new connections are refused, not left in the backlog"
    try:
        srv.proc.wait(10 * SLOW)
    except Exception:
        pass
    took = time.time() - t0
    assert srv.proc.returncode == 0 and took < 2 + 2.0 * SLOW, (
            f"[shutdown] exits 0 at the 2 s deadline despite the slow upload (exit {srv.proc.returncode} "
            f"after {took:.1f} s)")
    stop.set()
    slow.close()
    srv.stop()


def open_upload(port, length):
    """A connection that sent the head of an upload of LENGTH bytes and a little of its body."""
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(5 * SLOW)
    s.sendall(b"POST /v1/audio/transcriptions HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n"
              b"Content-Type: multipart/form-data; boundary=bnd\r\n\r\n--bnd\r\n" % length)
    return s


def first_line(s):
    try:
        return s.recv(4096).split(b"\r\n", 1)[0].decode("latin-1")
    except OSError as e:
        return repr(e)


def test_upload_budget(assets, start_server):
    """Uploads reserve their Content-Length from --max-buffer-mb before their
    a = assets
    body is read; beyond it they get 503 at once."""
    a = assets
    srv = start_server("budget", ["--model", f"tiny={a.tiny}", "--max-upload-mb", "4", "--max-buffer-mb", "9"])
    held = [open_upload(srv.port, 4 << 20) for _ in range(2)]     # 8 MB of 9 reserved
    time.sleep(0.3)
    t = time.time()
    third = open_upload(srv.port, 4 << 20)
    line = first_line(third)
    assert line.startswith("HTTP/1.1 503") and time.time() - t < 1.0 * SLOW, (
            f"[budget] a third 4 MB upload with 8 of 9 MB reserved: 503 at once ({line!r})")
    third.close()
    small = transcribe(srv.port, a.bytes("clip.wav"))              # 70 KB still fit
    assert small.status == 200, f"[budget] a small upload still fits beside them ({small!r})"
    for h in held:
        h.close()
    time.sleep(0.5)
    again = open_upload(srv.port, 4 << 20)
    again.settimeout(1.0)
    try:
        got = again.recv(4096)
    except socket.timeout:
        got = b""                                                   # admitted: waits for its body
    assert not got.startswith(b"HTTP/1.1 503"), f"[budget] the budget is given back when uploads end ({got[:60]!r})"
    again.close()
    srv.survived("a full upload budget")
    srv.stop()


def test_concurrent_large_uploads(assets, start_server):
    """60 concurrent uploads of 24 MB: each is admitted or refused from its
    a = assets
    head, and the server's peak memory stays under the budget (256 MB) plus
    what it held before."""
    # all 60 come from one address: the per-address limit (32) is raised to let them in together
    a = assets
    srv = start_server("large_uploads", ["--model", f"tiny={a.tiny}", "--threads", "2", "--max-connections-per-client", "64"])
    transcribe(srv.port, a.bytes("clip.wav"))
    base_kb = ts.proc_status_kb(srv.pid, "VmRSS")
    blob = os.urandom(24 << 20)                                      # not audio: answered 400 once read
    body, ctype = ts.multipart([("model", "tiny")], [("file", "noise.wav", blob)])
    statuses, errors = [], []

    def one():
        r = request(srv.port, "POST", "/v1/audio/transcriptions", body, {"Content-Type": ctype})
        statuses.append(r.status)
        if r.error:
            errors.append(r.error)

    threads = [threading.Thread(target=one) for _ in range(60)]
    ts.wait_all(threads)
    peak_kb = ts.proc_status_kb(srv.pid, "VmHWM")
    counts = {st: statuses.count(st) for st in set(statuses)}
    assert set(statuses) <= {400, 503} and counts.get(400, 0) >= 1, (
            f"[large_uploads] each upload read and refused as not audio (400) or refused at once (503): {counts} "
            f"{errors[:3]}")
    limit_mb = base_kb / 1024 + 256 + 64
    print(f"60 x 24 MB uploads: {counts}; RSS before {base_kb / 1024:.0f} MB, peak {peak_kb / 1024:.0f} MB")
    if not ts.SANITIZED:   # the sanitizers keep freed memory in quarantine
        assert peak_kb / 1024 <= limit_mb, (f"[large_uploads] peak RSS {peak_kb / 1024:.0f} MB <= "
                                             f"{limit_mb:.0f} MB (before {base_kb / 1024:.0f} MB + budget 256 + 64)")
    srv.survived("60 concurrent 24 MB uploads")
    srv.stop()


def test_slow_clients(assets, start_server):
    """The defaults: 300 attackers from 10 addresses (30 each, within the per-address limit of 32)
    against 256 connections in all and a 10 s header timeout; a normal client keeps its answers."""
    slow_clients(assets, start_server, "defaults", [], 100, 10, 10)
