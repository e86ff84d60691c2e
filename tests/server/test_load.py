"""Load test of audioc-server: 8 client threads send 200 transcription
requests (short clips; json, a few verbose_json) to a server with --workers 2
--threads 2. Every answer must be 200 with the CLI's text; prints requests/s
and p50/p95 latency; the server's resident memory after the run must be
within 10% of what it was after the first request (not under sanitizers).
"""
import http.client
import queue
import threading
import time

import pytest

import serverlib as ts

pytestmark = pytest.mark.threads   # all of it is concurrent requests

N_REQUESTS = 200
N_CLIENTS = 8


def percentile(values, p):
    v = sorted(values)
    if not v:
        return float("nan")
    k = (len(v) - 1) * p / 100.0
    lo = int(k)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (k - lo)


def test_load(assets, start_server):
    """Every one of the requests is answered with the CLI's text; RSS stays within 10 %."""
    a = assets
    srv = start_server("load", ["--model", f"tiny={a.tiny}", "--model", f"silero={ts.SILERO}", "--workers", "2",
                             "--threads", "2", "--max-queue", "64"])
    clips = ("clip.wav", "clip2.wav")
    audio = {c: a.bytes(c) for c in clips}
    want = {c: a.asr(c) for c in clips}
    for c in clips:
        assert want[c].get("text", "").strip() != "", f"[load] CLI text of {c}: {want[c]}"

    r = ts.transcribe(srv.port, audio["clip.wav"])
    assert r.status == 200 and (r.json() or {}).get("text") == want["clip.wav"].get("text"), (
            f"[load] first request ({r!r})")
    # the server warms every worker up before it listens, so memory is flat from here
    rss_first = ts.vmrss_kb(srv.pid)

    jobs = queue.Queue()
    for i in range(N_REQUESTS):
        jobs.put((i, clips[i % 2], "verbose_json" if i % 10 == 7 else "json"))
    lock = threading.Lock()
    latencies, failures, retries = [], [], [0]

    def verify(r, clip, fmt):
        j = r.json() or {}
        w = want[clip]
        if r.status != 200 or j.get("text") != w.get("text"):
            return False
        if fmt == "verbose_json":
            segs = j.get("segments") or []
            return (len(segs) == len(w["segments"])
                    and all(s.get("text") == x["text"] and s.get("tokens") == x.get("tokens")
                            for s, x in zip(segs, w["segments"])))
        return True

    def client():
        conn = None
        while True:
            try:
                i, clip, fmt = jobs.get_nowait()
            except queue.Empty:
                break
            t0 = time.time()
            for attempt in range(2):
                reused = conn is not None
                if conn is None:
                    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=ts.HTTP_TIMEOUT)
                r = ts.transcribe(srv.port, audio[clip], filename=clip, response_format=fmt, model="tiny",
                                  conn=conn)
                if r.status == 0 or r.header("connection").lower() == "close":
                    conn.close()
                    conn = None
                # a keep-alive connection the server closed meanwhile: retry once on a new one,
                # as HTTP client libraries do
                if r.status == 0 and reused and attempt == 0:
                    with lock:
                        retries[0] += 1
                    continue
                break
            dt = time.time() - t0
            ok = verify(r, clip, fmt)
            with lock:
                latencies.append(dt)
                if not ok:
                    failures.append((i, clip, fmt, r))
        if conn is not None:
            conn.close()

    threads = [threading.Thread(target=client) for _ in range(N_CLIENTS)]
    t0 = time.time()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.time() - t0
    rss_after = ts.vmrss_kb(srv.pid)

    rps = len(latencies) / wall if wall > 0 else 0.0
    p50, p95 = percentile(latencies, 50), percentile(latencies, 95)
    print(f"  load test: {len(latencies)} requests from {N_CLIENTS} clients in {wall:.2f} s: {rps:.1f} requests/s, "
          f"latency p50 {p50 * 1000:.0f} ms, p95 {p95 * 1000:.0f} ms, max {max(latencies, default=0) * 1000:.0f} ms; "
          f"{retries[0]} keep-alive retries")
    print(f"  server RSS: {rss_first / 1024:.1f} MB after the first request, {rss_after / 1024:.1f} MB after the run "
          f"({(rss_after - rss_first) * 100.0 / max(rss_first, 1):+.1f}%)")
    assert len(latencies) == N_REQUESTS and not failures, (
            f"[load] all {N_REQUESTS} requests answered 200 with the CLI's text: {len(failures)} failed, e.g. "
            f"{failures[:3]}")
    assert srv.alive(), "[load] the server is alive after the run"
    if ts.SANITIZED:
        print("  (RSS check skipped: sanitized build)")
    else:
        assert rss_first > 0 and abs(rss_after - rss_first) <= 0.10 * rss_first, (
                f"[load] RSS after the run {rss_after} kB within 10% of after the first request {rss_first} kB")
    srv.stop()

