"""audioc-server's memory does not grow with malformed uploads: 2000 uploads
of each kind of broken file (a WAV header cut short, a FLAC cut in its
metadata, an Ogg Vorbis stream cut after its first header, an MP3 with an ID3
tag and no frames, text) are each refused with 400, and the server's RSS
after them is within 5 % of its RSS after the first 100 of each. Under the
sanitizers (which keep freed memory in quarantine) fewer uploads are sent and
LeakSanitizer's report at exit is the check. Python stdlib only."""
import http.client
import os
import subprocess
import time

import pytest

import serverlib as ts
from serverlib import SAMPLES

WARMUP, TOTAL = (20, 200) if ts.SANITIZED else (100, 2000)


def malformed_files():
    """{kind: bytes}: one broken upload per kind, cut from the first sample clip."""
    src = SAMPLES[0]
    out = {}
    for ext in ("wav", "ogg"):
        path = os.path.join(ts.WORK, "clip." + ext)
        subprocess.run(["sox", src, "-r", "16000", path, "trim", "0", "1"], check=True)
        with open(path, "rb") as f:
            out[ext] = f.read()
    with open(src, "rb") as f:
        out["flac"] = f.read()[:30]                 # inside STREAMINFO
    out["wav"] = out["wav"][:30]                    # no data chunk
    pages = out["ogg"].split(b"OggS")
    out["ogg"] = b"OggS" + pages[1] + b"OggS" + pages[2][:40]   # identification header, then cut
    # an ID3v2 tag (10 bytes, no frames inside) then an MPEG header and nothing more
    out["mp3"] = b"ID3\x04\x00\x00\x00\x00\x00\x00" + b"\xff\xfb\x90\x64"
    out["text"] = b"not audio\n" * 50
    return out


def post(conn, name, blob):
    body, ctype = ts.multipart([("model", "hviske-tiny-da")], [("file", name, blob)])
    try:
        conn.request("POST", "/v1/audio/transcriptions", body=body, headers={"Content-Type": ctype})
        r = conn.getresponse()
        r.read()
        return r.status
    except (OSError, http.client.HTTPException):
        conn.close()   # reopened by the next request
        return 0


def test_malformed_uploads_do_not_grow_memory(start_server):
    """Every malformed upload is refused with 400 and RSS stays within 5 % of its warm figure."""
    if not SAMPLES:
        pytest.skip("no sample clips")
    files = malformed_files()
    srv = start_server("growth", ["--workers", "1", "--threads", "1"])
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=ts.HTTP_TIMEOUT)
    statuses = {k: {} for k in files}
    rss = {}
    t0 = time.time()
    for i in range(TOTAL):
        for kind, blob in files.items():
            st = post(conn, "upload." + ("txt" if kind == "text" else kind), blob)
            statuses[kind][st] = statuses[kind].get(st, 0) + 1
        if i + 1 == WARMUP:
            rss["warm"] = ts.vmrss_kb(srv.pid)
    rss["end"] = ts.vmrss_kb(srv.pid)
    took = time.time() - t0
    conn.close()
    for kind, counts in statuses.items():
        assert counts == {400: TOTAL}, f"[growth] {TOTAL} malformed {kind} uploads each answered 400: {counts}"
    per_request = (rss["end"] - rss["warm"]) * 1024 / ((TOTAL - WARMUP) * len(files))
    print(f"{TOTAL} x {len(files)} malformed uploads in {took:.1f} s: RSS after {WARMUP} of each "
          f"{rss['warm'] / 1024:.1f} MB, after {TOTAL} {rss['end'] / 1024:.1f} MB ({per_request:.0f} B per request)")
    if not ts.SANITIZED:
        assert rss["end"] <= rss["warm"] * 1.05, (
                f"[growth] RSS after {TOTAL} of each ({rss['end']} kB) within 5 % of after {WARMUP} ({rss['warm']} kB)")
    srv.survived(f"{TOTAL * len(files)} malformed uploads")
    srv.stop()   # LeakSanitizer reports at exit under the sanitizers

