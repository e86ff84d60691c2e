"""audioc-server's memory does not grow with the length of what it
transcribes: a 1 min and a 20 min upload (the sample clips repeated, Ogg
Vorbis so the 20 min fit the upload limit) are both transcribed, and the
server's peak RSS (VmHWM) after the 20 min is within 10 % of after the
1 min: chunk buffers and scratch are reused at a fixed size. That is
measured with --no-vad (35 s chunks: the largest scratch); with the VAD
(the default) the peak after the 20 min stays below that, speech segments
being shorter than the chunks. Under the
sanitizers (ten times slower, freed memory quarantined) 5 min stand in for
20 and only the answers are checked. Python stdlib only."""
import json
import os
import subprocess
import time

import pytest

import serverlib as ts
from serverlib import SAMPLES

LONG_MIN = 5 if ts.SANITIZED else 20


def make_clips():
    """{minutes: path} of Ogg Vorbis files of 1 and LONG_MIN minutes."""
    p = lambda name: os.path.join(ts.WORK, name)  # noqa: E731
    parts = []
    for i, f in enumerate(SAMPLES):
        parts.append(p(f"sample{i}.wav"))
        subprocess.run(["sox", "-D", f, "-r", "16000", "-c", "1", "-b", "16", parts[-1], "pad", "0", "1"],
                       check=True)
    subprocess.run(["sox", "-D", *parts, p("round.wav")], check=True)
    round_s = float(subprocess.run(["soxi", "-D", p("round.wav")], capture_output=True, text=True).stdout)
    out = {}
    for minutes in (1, LONG_MIN):
        path = p(f"{minutes}min.ogg")
        times = max(1, round(60 * minutes / round_s))
        subprocess.run(["sox", "-D", p("round.wav"), "-C", "0", path, "repeat", str(times - 1)], check=True)
        out[minutes] = path
    return out


def transcribe(port, path):
    with open(path, "rb") as f:
        blob = f.read()
    body, ctype = ts.multipart([("model", "hviske-tiny-da"), ("response_format", "json")],
                               [("file", os.path.basename(path), blob)])
    return ts.request(port, "POST", "/v1/audio/transcriptions", body, {"Content-Type": ctype},
                      timeout=600 * ts.SLOW)


def test_long_uploads_in_bounded_memory(start_server):
    """Long uploads are transcribed; the server's peak RSS does not grow with their length."""
    if not SAMPLES:
        pytest.skip("no sample clips")
    clips = make_clips()
    peaks = {}
    for tag, args in (("no_vad", ["--no-vad"]), ("vad", [])):
        # one worker for both uploads (no quick lane): the bound is on one worker's memory
        srv = start_server("long_" + tag, ["--workers", "1", "--quick-workers", "0", "--threads", "2", *args])
        peaks[tag] = {}
        for minutes, path in clips.items():
            t0 = time.time()
            r = transcribe(srv.port, path)
            text = json.loads(r.body).get("text", "") if r.status == 200 else ""
            assert r.status == 200 and len(text) > 10 * minutes, (
                    f"[long {tag}] {minutes} min upload ({os.path.getsize(path) >> 20} MB): {r}")
            peaks[tag][minutes] = ts.proc_status_kb(srv.pid, "VmHWM") / 1024
            print(f"{tag}: {minutes} min: {time.time() - t0:.1f} s, {len(text)} characters, server peak RSS "
                  f"{peaks[tag][minutes]:.1f} MB")
        srv.survived("long uploads")
        srv.stop()
    p, v = peaks["no_vad"], peaks["vad"]
    if not ts.SANITIZED and len(p) == 2 and len(v) == 2:
        assert p[LONG_MIN] <= 1.10 * p[1], (
                f"[long] --no-vad: server peak RSS after {LONG_MIN} min within 10 % of after 1 min: {p} MB")
        assert v[LONG_MIN] <= p[LONG_MIN], (f"[long] with the VAD, the peak RSS after {LONG_MIN} min is at most "
                                            f"the --no-vad one: {v[LONG_MIN]:.1f} vs {p[LONG_MIN]:.1f} MB")

