#!/usr/bin/python3
"""Soak test of a running audioc-server: N clients for T minutes, each
sending transcriptions of the sample clips (one keep-alive connection per
client), with a share of malformed uploads (truncated WAV, Ogg and MP3
headers, text) and health checks between them; with --voice ID also VAD,
speech (whole and as server-sent events) and conversions to that voice, in
equal shares with the transcriptions. Prints the requests, the errors (an
answer not 200, a malformed upload not 400, a stream without its done
event, a failed connection), p50/p99 latency per kind, and the server's RSS
at the start, after a tenth of the run (every worker's scratch grown) and
at the end (with --pid). Python stdlib only.

  audioc-server --port 8080 --model asr=PKG --model silero=VAD --model v=VEVO2 --voice anna=anna.wav &
  bench/server_soak.py --url http://127.0.0.1:8080 --pid $! --clients 8 --minutes 10 --voice anna
"""
import argparse
import glob
import http.client
import json
import os
import random
import sys
import threading
import time
import urllib.parse

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [os.path.join(ROOT, "tests", "server"), os.path.join(ROOT, "tests")]
from test_load import percentile  # noqa: E402
MALFORMED = {
    "cut.wav": b"RIFF\x24\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00",
    "cut.ogg": b"OggS\x00\x02" + bytes(20) + b"\x01\x1e\x01vorbis" + bytes(8),
    "header.mp3": b"ID3\x04\x00\x00\x00\x00\x00\x00\xff\xfb\x90\x64",
    "text.wav": b"not audio\n" * 50,
}


def rss_kb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def multipart(fields, filename, data):
    b = "soak-" + os.urandom(8).hex()
    parts = [f'--{b}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n'.encode() for k, v in fields]
    parts.append(f'--{b}\r\nContent-Disposition: form-data; name="file"; filename="{filename}"\r\n'
                 f"Content-Type: application/octet-stream\r\n\r\n".encode() + data + b"\r\n")
    return b"".join(parts) + f"--{b}--\r\n".encode(), f"multipart/form-data; boundary={b}"


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.latency = {}     # kind -> [seconds]
        self.errors = {}      # kind -> count
        self.examples = []

    def add(self, kind, seconds, ok, what):
        with self.lock:
            self.latency.setdefault(kind, []).append(seconds)
            if not ok:
                self.errors[kind] = self.errors.get(kind, 0) + 1
                if len(self.examples) < 5:
                    self.examples.append(f"{kind}: {what}")


SPEECH_TEXTS = ["Good morning to you.", "The quick brown fox jumps over the lazy dog near the quiet river bank.",
                "Please call Stella and ask her to bring these things with her from the store."]


def voice_request(kind, rng, headers, clips, a):
    """The method, path, body and headers of a voice-side request of KIND."""
    name, data = rng.choice(clips)
    gen = {"seed": rng.randrange(1000), "steps": a.speech_steps, "max_tokens": a.speech_max_tokens}
    if kind == "vad":
        body, ctype = multipart([], name, data)
        return "POST", "/v1/audio/vad", body, {**headers, "Content-Type": ctype}
    if kind == "conversion":
        body, ctype = multipart([("voice", a.voice), *[(k, str(v)) for k, v in gen.items()]], name, data)
        return "POST", "/v1/audio/conversions", body, {**headers, "Content-Type": ctype}
    req = {"voice": a.voice, "input": rng.choice(SPEECH_TEXTS), "response_format": "wav", **gen}
    if kind == "speech_sse":
        req.update(response_format="pcm", stream_format="sse")
    return "POST", "/v1/audio/speech", json.dumps(req).encode(), {**headers, "Content-Type": "application/json"}


def client(url, headers, clips, a, deadline, seed, stats):
    rng = random.Random(seed)
    conn = None
    kinds = ["transcribe"] + (["vad", "speech", "speech_sse", "conversion"] if a.voice else [])
    while time.time() < deadline:
        if conn is None:
            conn = http.client.HTTPConnection(url.hostname, url.port or 80, timeout=300)
        r = rng.random()
        if r < 0.1:
            kind, method, path, body, hdrs, want = "health", "GET", "/health", None, dict(headers), 200
        elif r < 0.1 + a.bad_share:
            name = rng.choice(sorted(MALFORMED))
            kind, data, want = "malformed", MALFORMED[name], 400
            body, ctype = multipart([("response_format", "json")], name, data)
            method, path, hdrs = "POST", "/v1/audio/transcriptions", {**headers, "Content-Type": ctype}
        else:
            kind, want = rng.choice(kinds), 200
            if kind == "transcribe":
                name, data = rng.choice(clips)
                body, ctype = multipart([("response_format", "json")], name, data)
                method, path, hdrs = "POST", "/v1/audio/transcriptions", {**headers, "Content-Type": ctype}
            else:
                method, path, body, hdrs = voice_request(kind, rng, headers, clips, a)
        t0 = time.time()
        try:
            conn.request(method, path, body=body, headers=hdrs)
            resp = conn.getresponse()
            answer = resp.read()
            status = resp.status
            if kind == "speech_sse" and status == 200 and b'"speech.audio.done"' not in answer:
                status = "a stream without its done event"
            if resp.getheader("Connection", "").lower() == "close":
                conn.close()
                conn = None
        except (OSError, http.client.HTTPException) as e:
            status = f"no answer ({e!r})"
            conn.close()
            conn = None
        stats.add(kind, time.time() - t0, status == want, f"{status} (want {want})")
    if conn is not None:
        conn.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--url", default="http://127.0.0.1:8080")
    ap.add_argument("--pid", type=int, help="the server's process id, for its RSS")
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--minutes", type=float, default=10)
    ap.add_argument("--bad-share", type=float, default=0.2, help="share of malformed uploads (default 0.2)")
    ap.add_argument("--api-key")
    ap.add_argument("--clips", nargs="*", help="audio files to send (default: samples/*.flac)")
    ap.add_argument("--voice", help="a --voice id of the server: adds VAD, speech (whole and SSE) and conversions")
    ap.add_argument("--speech-steps", type=int, default=8, help="flow-matching steps of the voice requests (8)")
    ap.add_argument("--speech-max-tokens", type=int, default=100, help="their max_tokens (100)")
    a = ap.parse_args()

    url = urllib.parse.urlparse(a.url)
    headers = {"Authorization": f"Bearer {a.api_key}"} if a.api_key else {}
    paths = a.clips or sorted(glob.glob(os.path.join(ROOT, "samples", "*.flac")))
    clips = [(os.path.basename(p), open(p, "rb").read()) for p in paths]
    if not clips:
        raise SystemExit("server_soak: no clips (give --clips)")
    stats = Stats()
    rss0 = rss_kb(a.pid) if a.pid else 0
    t0 = time.time()
    deadline = t0 + a.minutes * 60
    threads = [threading.Thread(target=client, args=(url, headers, clips, a, deadline, i, stats))
               for i in range(a.clients)]
    for t in threads:
        t.start()
    # every worker's scratch has grown to its size after a tenth of the run
    time.sleep(max(0.0, t0 + 0.1 * (deadline - t0) - time.time()))
    rss_warm = rss_kb(a.pid) if a.pid else 0
    for t in threads:
        t.join()
    took = time.time() - t0
    rss1 = rss_kb(a.pid) if a.pid else 0

    total = sum(len(v) for v in stats.latency.values())
    errors = sum(stats.errors.values())
    print(f"{a.clients} clients for {took:.0f} s: {total} requests ({total / took:.1f}/s), {errors} errors")
    for kind in sorted(stats.latency):
        v = stats.latency[kind]
        print(f"  {kind:10s} {len(v):6d} requests, {stats.errors.get(kind, 0):4d} errors, "
              f"p50 {percentile(v, 50) * 1000:7.1f} ms, p99 {percentile(v, 99) * 1000:7.1f} ms")
    for e in stats.examples:
        print(f"  error: {e}")
    if a.pid:
        print(f"  server RSS: start {rss0 / 1024:.1f} MB, after a tenth of the run {rss_warm / 1024:.1f} MB, "
              f"end {rss1 / 1024:.1f} MB ({(rss1 - rss_warm) / max(rss_warm, 1) * 100:+.1f} % since the tenth)")
    return 1 if errors else 0


if __name__ == "__main__":
    raise SystemExit(main())
