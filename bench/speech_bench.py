#!/usr/bin/python3
"""audioc-server's time to the first streamed audio of POST /v1/audio/speech.

Starts audioc-server on a Vevo2 package with one espeak-ng reference voice
(and its transcript), warms it up with one request, then for a text of
three chunks (about 60 words each) measures, over --runs requests:
- stream_format=sse: the time to the first speech.audio.delta event (the
  first chunk vocoded and sent) and to speech.audio.done;
- the same request answered whole (response_format=pcm).
Random weights never stop on their own: every chunk is made 250 AR tokens
long (20 s of audio, what 60 words take when spoken), as --tokens says.
The package is the tiny random one of the tests (made once under
build/bench/speech_tiny), the full-size one of bench/vevo2_bench.py with
--full (build/bench/vevo2_full, ~3.6 GB, made once: minutes), or --package.

usage: bench/speech_bench.py [--build DIR] [--package DIR | --full] [--runs N] [--threads N] [--steps N]
                             [--tokens N]
"""
import argparse
import http.client
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
VOICE_TEXT = "Please call Stella and ask her to bring these things with her from the store."
SENTENCE = "The quick brown fox jumps over the lazy dog near the quiet river bank."
TEXT = " ".join([SENTENCE] * 13)   # 182 words: three chunks


def sh(*cmd):
    return subprocess.run([str(c) for c in cmd], check=True, capture_output=True, text=True)


def package(a, work):
    if a.package:
        return a.package
    full = a.full
    pkg = os.path.join(work, "vevo2_full" if full else "speech_tiny")
    if not os.path.exists(os.path.join(pkg, "vocoder", "model.safetensors")):
        print(f"making the {'full-size F16' if full else 'tiny'} package (once) ...", file=sys.stderr)
        sh("/usr/bin/python3", os.path.join(ROOT, "tests", "ref", "vevo2", "make_package.py"), pkg,
           *(["--full", "--dtype", "F16"] if full else ["--seed", "21"]))
    return pkg


def voice(work):
    raw, out = os.path.join(work, "speech_voice_22k.wav"), os.path.join(work, "speech_voice.wav")
    if not os.path.exists(out):
        sh("espeak-ng", "-v", "en+f3", "-p", 75, "-w", raw, VOICE_TEXT)
        sh("sox", "-D", raw, "-r", 24000, out)
    return out


def post(port, body):
    """(seconds to the first delta or None, seconds to the end, status)."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=3600)
    t0 = time.perf_counter()
    c.request("POST", "/v1/audio/speech", json.dumps(body), {"Content-Type": "application/json"})
    r = c.getresponse()
    first = None
    if body.get("stream_format") == "sse":
        while True:
            line = r.readline()
            if not line:
                break
            if first is None and line.startswith(b'data: {"type":"speech.audio.delta"'):
                first = time.perf_counter() - t0
    else:
        r.read()
    total = time.perf_counter() - t0
    c.close()
    return first, total, r.status


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--package")
    ap.add_argument("--full", action="store_true")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--steps", type=int, default=32)
    ap.add_argument("--tokens", type=int, default=250)
    a = ap.parse_args()
    work = os.path.join(a.build, "bench")
    os.makedirs(work, exist_ok=True)
    pkg, ref = package(a, work), voice(work)
    srv = subprocess.Popen([os.path.join(a.build, "audioc-server"), "--model", f"v={pkg}", "--voice",
                            f"ref={ref}:{VOICE_TEXT}", "--port", "0", "--threads", str(a.threads), "--workers", "1",
                            "-q"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = srv.stdout.readline()
        if "listening on" not in line:
            sys.exit(f"audioc-server did not start: {srv.stderr.read()[-500:]}")
        port = int(line.rsplit(":", 1)[1])
        body = {"model": "v", "voice": "ref", "input": TEXT, "response_format": "pcm", "steps": a.steps, "seed": 1,
                "min_tokens": a.tokens, "max_tokens": a.tokens}
        post(port, dict(body, input=SENTENCE))   # the first request loads the AR and FM models
        firsts, sse_totals, totals = [], [], []
        for _ in range(a.runs):
            f, t, st = post(port, dict(body, stream_format="sse"))
            assert st == 200 and f is not None, st
            firsts.append(f)
            sse_totals.append(t)
            _, t, st = post(port, body)
            assert st == 200, st
            totals.append(t)
        med = statistics.median
        audio = 3 * a.tokens / 12.5
        print(f"package {pkg}, {a.threads} thread(s), {a.steps} steps, {len(TEXT.split())} words (3 chunks of "
              f"{a.tokens} tokens, {audio:.0f} s of audio), median of {a.runs}")
        print("| first audio chunk, SSE (s) | whole, SSE (s) | whole, not streamed (s) | real-time factor |")
        print("|---|---|---|---|")
        print(f"| {med(firsts):.3f} | {med(sse_totals):.3f} | {med(totals):.3f} | {med(totals) / audio:.3f} |")
    finally:
        srv.terminate()
        srv.wait()


if __name__ == "__main__":
    main()
