"""audioc vad as a user runs it: help, output formats, family detection,
every audio container, several files. Needs the real weights."""
import csv
import io
import json
import os
import subprocess

import pytest

import testenv
from common import CLIP, LIBRI, MARBLE_DIR, SILERO, SILERO_DIR, audioc

pytestmark = pytest.mark.usefixtures("vad_data")

OPTIONS = ["--model", "--family", "--threshold", "--neg-threshold", "--min-speech-ms",
           "--min-silence-ms", "--speech-pad-ms", "--max-speech-s",
           "--min-silence-at-max-speech-ms", "--no-split-at-longest-silence", "--format",
           "--probs", "--timings", "--threads", "--progress", "--quiet", "--help"]


def test_help():
    rc, out, _ = audioc("--help")
    assert rc == 0 and "vad" in out and "convert" in out, "audioc --help lists the commands"
    rc, out, _ = audioc("vad", "--help")
    assert rc == 0, "audioc vad --help exits 0"
    for opt in OPTIONS:
        assert opt in out, f"audioc vad --help documents {opt}"
    rc, _, err = audioc("vad", "--bogus", CLIP)
    assert rc == 2 and "unknown option" in err, f"unknown option: exit 2 ({rc}, {err.strip()})"
    rc, _, err = audioc("vad", "-m", SILERO)
    assert rc == 2 and "no input files" in err, "no input files: exit 2"
    rc, _, err = audioc("vad", "-m", SILERO, "--threshold", "1.5", CLIP)
    assert rc == 2 and "--threshold" in err, "out-of-range threshold: exit 2"
    env = dict(os.environ)
    env.pop("AUDIOC_VAD_MODEL", None)
    p = subprocess.run([testenv.AUDIOC, "vad", CLIP], capture_output=True, text=True, env=env)
    assert p.returncode == 0 and p.stdout == "0.354\t2.095\n", f"no --model: the bundled Silero VAD is used: {p.stdout!r}"
    env["AUDIOC_VAD_MODEL"] = SILERO
    p = subprocess.run([testenv.AUDIOC, "vad", CLIP], capture_output=True, text=True, env=env)
    assert p.returncode == 0 and p.stdout == "0.354\t2.095\n", f"AUDIOC_VAD_MODEL is used: {p.stdout!r}"


def test_formats():
    rc, text, _ = audioc("vad", "-m", SILERO, CLIP)
    assert rc == 0 and text == "0.354\t2.095\n", f"text output: {text!r}"
    rc, out, _ = audioc("vad", "-m", SILERO, "--format", "json", CLIP)
    j = json.loads(out)
    assert j["family"] == "silero_vad" and j["sample_rate"] == 16000 and j["samples"] == 33520, f"json header fields: {j}"
    assert (j["segments"] == [{"start": 0.354, "end": 2.095, "start_sample": 5664,
                               "end_sample": 33520, "confidence": 1.0}]), f"json segments: {j['segments']}"
    rc, out, _ = audioc("vad", "-m", SILERO, "--format", "csv", CLIP)
    rows = list(csv.DictReader(io.StringIO(out)))
    assert len(rows) == 1 and rows[0]["start_sample"] == "5664" and rows[0]["end"] == "2.095", f"csv rows: {rows}"
    # probabilities in every format agree with each other
    rc, out, _ = audioc("vad", "-m", SILERO, "--format", "json", "--probs", CLIP)
    probs = json.loads(out)["probs"]
    assert len(probs) == 66 and abs(json.loads(out)["hop_seconds"] - 0.032) < 1e-9, "66 silero probs"
    rc, out, _ = audioc("vad", "-m", SILERO, "--probs", CLIP)
    lines = [ln.split("\t") for ln in out.splitlines()]
    assert len(lines) == 66 and all(abs(float(p) - q) < 1e-6 for (_, p), q in zip(lines, probs)), "text --probs matches json"
    assert lines[12][0] == "0.384", f"text --probs times: {lines[12]}"
    rc, out, _ = audioc("vad", "-m", SILERO, "--format", "csv", "--probs", CLIP)
    rows = list(csv.DictReader(io.StringIO(out)))
    assert len(rows) == 66 and rows[0].keys() == {"file", "index", "time", "prob"}, "csv --probs"
    # spec §4: chunk 12 is the first above the threshold
    assert probs[11] < 0.5 <= probs[12], f"silero probs 11/12: {probs[11]} {probs[12]}"


def test_families_and_options():
    for model, family in ((SILERO, "silero_vad"), (SILERO_DIR, "silero_vad"),
                          (MARBLE_DIR, "marblenet_vad"),
                          (os.path.join(MARBLE_DIR, "marblenet_vad.safetensors"), "marblenet_vad")):
        rc, out, err = audioc("vad", "-m", model, "--format", "json", CLIP)
        assert rc == 0 and json.loads(out)["family"] == family, f"{model}: detected {family} ({err})"
    rc, out, _ = audioc("vad", "-m", SILERO_DIR, "--family", "silero_vad", CLIP)
    assert rc == 0 and out == "0.354\t2.095\n", "--family silero_vad"
    rc, _, err = audioc("vad", "-m", SILERO, "--family", "marblenet_vad", CLIP)
    assert rc == 1 and "config" in err, f"wrong --family: clear error ({err.strip()})"
    rc, _, err = audioc("vad", "-m", SILERO, "--family", "nope", CLIP)
    assert rc == 1 and "unknown VAD family" in err, "unknown family"
    # options change the result as documented
    rc, out, _ = audioc("vad", "-m", SILERO, "--speech-pad-ms", "0", CLIP)
    assert out == "0.384\t2.095\n", f"--speech-pad-ms 0: {out!r}"
    rc, out, _ = audioc("vad", "-m", SILERO, "--min-speech-ms", "5000", CLIP)
    assert rc == 0 and out == "", f"--min-speech-ms 5000 drops the speech: {out!r}"
    long = os.path.join(LIBRI, "librispeech_test_clean_6930-75918-0001.wav")
    rc, out, _ = audioc("vad", "-m", SILERO, "--max-speech-s", "5", "--format", "json", long)
    segs = json.loads(out)["segments"]
    assert len(segs) >= 3 and all(s["end"] - s["start"] <= 5.0 + 0.07 for s in segs), f"--max-speech-s 5 splits: {[(s['start'], s['end']) for s in segs]}"
    rc, out, _ = audioc("vad", "-m", MARBLE_DIR, "--threshold", "0.9", "--format", "json", long)
    assert rc == 0 and len(json.loads(out)["segments"]) == 2, "marblenet --threshold 0.9 merges nothing"
    rc, out, err = audioc("vad", "-m", SILERO, "--timings", CLIP)
    assert "real-time factor" in err and "peak RSS" in err, "--timings prints times and RSS"


def test_containers():
    """Every container libsndfile reads gives (nearly) the same answer."""
    work = testenv.work("vad_cli")
    for ext in ("flac", "ogg", "opus", "mp3", "wav"):
        path = os.path.join(work, "clip." + ext)
        rc, _, err = audioc("convert", CLIP, path)
        assert rc == 0, f"convert to .{ext}: {err.strip()}"
        rc, out, err = audioc("vad", "-m", SILERO, "--format", "json", path)
        j = json.loads(out) if rc == 0 else {}
        segs = j.get("segments", [])
        ok = len(segs) == 1 and abs(segs[0]["start"] - 0.354) <= 0.04 and abs(segs[0]["end"] - 2.095) <= 0.04
        assert ok, f".{ext}: segments {segs} {err.strip()}"
    # 44.1 kHz stereo: segments are in the file's own samples
    stereo = os.path.join(work, "clip_44k_stereo.wav")
    subprocess.run(["sox", "-D", CLIP, "-r", "44100", "-c", "2", stereo], check=True)
    rc, out, _ = audioc("vad", "-m", SILERO, "--format", "json", stereo)
    j = json.loads(out)
    s = j["segments"][0]
    assert j["sample_rate"] == 44100 and j["channels"] == 2, "44.1k stereo header"
    assert abs(s["start_sample"] - 5664 * 44100 // 16000) <= 512 * 3 and s["end_sample"] == j["samples"], f"44.1k stereo segment {s}"


def test_several_files():
    files = sorted(os.path.join(LIBRI, f) for f in os.listdir(LIBRI) if f.endswith(".wav"))
    rc, out, _ = audioc("vad", "-m", SILERO, "--format", "json", *files)
    lines = out.splitlines()
    assert rc == 0 and len(lines) == 4 and all(json.loads(ln)["file"] == f for ln, f in zip(lines, files)), "json: one line per file, in order"
    rc, out, _ = audioc("vad", "-m", SILERO, *files)
    assert out.count(".wav:\n") == 4, "text: a header per file"
    rc, out, err = audioc("vad", "-m", SILERO, files[0], "/nonexistent.wav", files[1])
    assert rc == 1 and "/nonexistent.wav" in err and out.count(".wav:\n") == 2, "a failing file is reported and the others still run"

