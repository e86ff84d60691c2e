"""Bad input through audioc vad: broken or lying model files, broken
configs, non-audio bytes, empty audio, and a 3-hour silent file that must
stream in bounded memory. Each ends in a clear error or a correct result,
never a crash, and (in the sanitizer build) without a sanitizer report."""
import json
import os
import shutil
import struct
import subprocess

import pytest

import testenv
from common import CLIP, MARBLE_DIR, SAMPLES, SILERO, audioc, clean_failure, read_st, write_st
from testenv import AUDIOC, SANITIZED

WORK = testenv.work("bad_input")
pytestmark = pytest.mark.usefixtures("vad_data")


def rebuild(header, data, change):
    """A consistent file whose tensors went through CHANGE(name, info, bytes)."""
    out_h, out_d = {}, b""
    items = sorted(((k, v) for k, v in header.items() if k != "__metadata__"),
                   key=lambda kv: kv[1]["data_offsets"][0])
    for name, info in items:
        b, e = info["data_offsets"]
        r = change(name, dict(info), data[b:e])
        if r is None:
            continue
        info, raw = r
        info["data_offsets"] = [len(out_d), len(out_d) + len(raw)]
        out_h[name] = info
        out_d += raw
    return out_h, out_d


def vad(model, audio=CLIP, *extra):
    return audioc("vad", "-m", model, *extra, audio)


def test_model_files():
    header, data = read_st(SILERO)
    p = lambda name: os.path.join(WORK, name)  # noqa: E731
    blob = open(SILERO, "rb").read()

    open(p("truncated.safetensors"), "wb").write(blob[:len(blob) // 2])
    rc, _, err = vad(p("truncated.safetensors"))
    clean_failure("truncated file", rc, err, "data_offsets")
    open(p("header_only.safetensors"), "wb").write(blob[:100])
    rc, _, err = vad(p("header_only.safetensors"))
    clean_failure("truncated header", rc, err, "truncated")
    open(p("empty.safetensors"), "wb").write(b"")
    rc, _, err = vad(p("empty.safetensors"))
    clean_failure("empty model file", rc, err, "too short")

    lying = dict(header)
    lying["conv1.bias"] = dict(header["conv1.bias"], data_offsets=[0, 10 ** 12])
    rc, _, err = vad(write_st(p("offsets.safetensors"), lying, data))
    clean_failure("offset past the end", rc, err, "outside")
    lying = dict(header)
    lying["conv1.bias"] = dict(header["conv1.bias"], shape=[1000])
    rc, _, err = vad(write_st(p("size.safetensors"), lying, data))
    clean_failure("size that lies", rc, err, "needs 4000 bytes")
    lying = dict(header)
    b0 = header["conv1.bias"]["data_offsets"][0]
    lying["conv2.bias"] = dict(header["conv2.bias"], data_offsets=[b0, b0 + 256])
    rc, _, err = vad(write_st(p("overlap.safetensors"), lying, data))
    clean_failure("overlapping tensors", rc, err, "overlap")
    # a name given twice (JSON allows it; json.dumps does not write it), with its offsets repeated
    raw = json.dumps(header).encode()
    entry = b'"conv1.bias": ' + json.dumps(header["conv1.bias"]).encode()
    assert entry in raw
    raw = raw.replace(entry, entry + b", " + entry)
    raw += b" " * (-len(raw) % 8)
    open(p("duplicate.safetensors"), "wb").write(struct.pack("<Q", len(raw)) + raw + data)
    rc, _, err = vad(p("duplicate.safetensors"))
    clean_failure("duplicate tensor name", rc, err, "duplicate tensor 'conv1.bias'")
    huge = struct.pack("<Q", 1 << 40) + blob[8:]
    open(p("huge_header.safetensors"), "wb").write(huge)
    rc, _, err = vad(p("huge_header.safetensors"))
    clean_failure("header length of 1 TB", rc, err, "100 MB")

    h, d = rebuild(header, data, lambda n, i, b: None if n == "lstm_cell.bias_hh" else (i, b))
    rc, _, err = vad(write_st(p("missing.safetensors"), h, d), CLIP, "--family", "silero_vad")
    clean_failure("missing tensor", rc, err, "missing tensor 'lstm_cell.bias_hh'")

    def transpose(n, i, b):
        if n == "conv1.weight":
            i["shape"] = [129, 128, 3]
        return i, b
    h, d = rebuild(header, data, transpose)
    rc, _, err = vad(write_st(p("shape.safetensors"), h, d))
    clean_failure("wrong shape", rc, err, "'conv1.weight' has shape [129, 128, 3], expected [128, 129, 3]")

    def to_i64(n, i, b):
        if n == "final_conv.bias":
            i["dtype"] = "I64"
            return i, struct.pack("<q", 0)
        return i, b
    h, d = rebuild(header, data, to_i64)
    rc, _, err = vad(write_st(p("dtype.safetensors"), h, d))
    clean_failure("wrong dtype", rc, err, "dtype I64")

    def to_u8(n, i, b):
        if n == "final_conv.bias":
            i["dtype"] = "U8"
            return i, b"\0"
        return i, b
    h, d = rebuild(header, data, to_u8)
    rc, _, err = vad(write_st(p("u8.safetensors"), h, d))
    clean_failure("unsupported dtype", rc, err, "dtype 'U8' is not supported")

    open(p("notjson.safetensors"), "wb").write(struct.pack("<Q", 16) + b"this is not json" + b"\0" * 8)
    rc, _, err = vad(p("notjson.safetensors"))
    clean_failure("header not JSON", rc, err, "not valid JSON")
    rc, _, err = vad(p("does_not_exist.safetensors"))
    clean_failure("missing model file", rc, err, "no such file")


def test_half_precision():
    """F16 and BF16 copies of the weights load and give nearly the same answer."""
    import numpy as np
    header, data = read_st(SILERO)
    _, out, _ = vad(SILERO, CLIP, "--format", "json", "--probs")
    ref = json.loads(out)
    for dtype, tol in (("F16", 2e-2), ("BF16", 5e-2)):
        def conv(n, i, b):
            x = np.frombuffer(b, dtype="<f4")
            if dtype == "F16":
                raw = x.astype("<f2").tobytes()
            else:
                u = x.view("<u4").astype(np.uint64)
                raw = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype("<u2").tobytes()
            i["dtype"] = dtype
            return i, raw
        h, d = rebuild(header, data, conv)
        path = write_st(os.path.join(WORK, f"silero_{dtype}.safetensors"), h, d)
        rc, out, err = vad(path, CLIP, "--format", "json", "--probs")
        assert rc == 0, f"{dtype} weights load: {err.strip()}"
        got = json.loads(out)
        diff = max(abs(a - b) for a, b in zip(got["probs"], ref["probs"]))
        assert diff < tol, f"{dtype} weights: max prob diff {diff:.3g} >= {tol}"
        assert got["segments"] == ref["segments"], f"{dtype} weights: same segments"


def test_configs():
    base = json.load(open(os.path.join(MARBLE_DIR, "marblenet_vad_config.json")))
    weights = os.path.join(MARBLE_DIR, "marblenet_vad.safetensors")

    def model_with(name, cfg_text):
        d = os.path.join(WORK, name)
        os.makedirs(d, exist_ok=True)
        shutil.copy(weights, d)
        with open(os.path.join(d, "marblenet_vad_config.json"), "w") as f:
            f.write(cfg_text)
        return d

    cfg = dict(base)
    del cfg["n_mels"]
    rc, _, err = vad(model_with("cfg_missing", json.dumps(cfg)))
    clean_failure("config without n_mels", rc, err, "missing key 'n_mels'")
    rc, _, err = vad(model_with("cfg_broken", json.dumps(base)[:-20]))
    clean_failure("config not JSON", rc, err, "not valid JSON")
    cfg = dict(base, n_fft="512")
    rc, _, err = vad(model_with("cfg_type", json.dumps(cfg)))
    clean_failure("config n_fft as string", rc, err, "'n_fft' must be an integer")
    cfg = dict(base, n_mels=64)
    rc, _, err = vad(model_with("cfg_shape", json.dumps(cfg)))
    clean_failure("config disagreeing with weights", rc, err, "expected [1, 64, 257]")
    cfg = dict(base, window="hamming")
    rc, _, err = vad(model_with("cfg_window", json.dumps(cfg)))
    clean_failure("unsupported window", rc, err, "window 'hamming' is not supported")
    cfg = dict(base, some_future_key=1)
    rc, out, err = vad(model_with("cfg_unknown", json.dumps(cfg)))
    assert rc == 0 and out and "ignoring unknown key 'some_future_key'" in err, f"unknown config key: warning, still runs ({err.strip()})"
    rc, out, err = vad(model_with("cfg_unknown", json.dumps(cfg)), CLIP, "-q")
    assert rc == 0 and err == "", f"-q silences warnings: {err!r}"


def test_audio_inputs():
    p = lambda name: os.path.join(WORK, name)  # noqa: E731
    with open(p("text.wav"), "w") as f:
        f.write("this is not audio at all\n" * 100)
    for model in (SILERO, MARBLE_DIR):
        rc, _, err = vad(model, p("text.wav"))
        clean_failure("non-audio bytes", rc, err, "text.wav: not a readable audio file")
        open(p("zero_bytes.wav"), "wb").close()
        rc, _, err = vad(model, p("zero_bytes.wav"))
        clean_failure("0-byte file", rc, err, "zero_bytes.wav")
        rc, _, err = vad(model, p("missing.wav"))
        clean_failure("missing audio file", rc, err, "missing.wav: cannot open")
        # an MP3 that is only a header: an ID3 tag, or one MPEG frame header, and no frames
        for name, head in (("id3_only.mp3", b"ID3\x04\x00\x00\x00\x00\x00\x00"),
                           ("id3_frame_header.mp3", b"ID3\x04\x00\x00\x00\x00\x00\x00\xff\xfb\x90\x64"),
                           ("frame_header.mp3", b"\xff\xfb\x90\x64")):
            open(p(name), "wb").write(head)
            rc, _, err = vad(model, p(name))
            clean_failure(f"header-only MP3 {name}", rc, err, f"{name}: not a readable audio file (an MP3 "
                          "header with no decodable audio frames")
        # a valid WAV with no samples: no speech, no error
        subprocess.run(["sox", "-n", "-r", "16000", "-c", "1", "-b", "16", p("empty.wav"), "trim", "0", "0"],
                       check=True)
        rc, out, err = vad(model, p("empty.wav"), "--format", "json")
        ok = rc == 0 and json.loads(out)["segments"] == [] and json.loads(out)["samples"] == 0
        assert ok, f"0-sample WAV: empty result ({rc}, {out.strip()}, {err.strip()})"
        # a truncated WAV (header promises more data than there is) still decodes what is there
        blob = open(CLIP, "rb").read()
        open(p("cut.wav"), "wb").write(blob[:len(blob) // 2])
        rc, out, err = vad(model, p("cut.wav"), "--format", "json")
        assert rc == 0 and json.loads(out)["samples"] > 0, f"truncated WAV: decodes the part present ({err})"
        # float WAVs of NaN or infinity (one bad sample in a stereo file is enough) are refused
        for name, bad in (("nan.wav", float("nan")), ("inf.wav", float("inf")), ("neginf.wav", float("-inf"))):
            write_float_wav(p(name), 16000, 2, [0.1] * 4001 + [bad] + [0.0] * 3998)
            for what, argv in (("vad", vad(model, p(name))),
                               ("transcribe", audioc("transcribe", p(name)))):
                rc, _, err = argv
                clean_failure(f"{what} of a float WAV with {bad}", rc, err,
                              f"{name}: sample 2000 is not a finite number")


def write_float_wav(path, rate, channels, samples):
    """A 32-bit float WAV of interleaved SAMPLES."""
    data = struct.pack(f"<{len(samples)}f", *samples)
    fmt = struct.pack("<HHIIHH", 3, channels, rate, rate * 4 * channels, 4 * channels, 32)
    with open(path, "wb") as f:
        f.write(b"RIFF" + struct.pack("<I", 4 + 8 + len(fmt) + 8 + len(data)) + b"WAVE")
        f.write(b"fmt " + struct.pack("<I", len(fmt)) + fmt + b"data" + struct.pack("<I", len(data)) + data)


def test_three_hour_silence():
    """3 hours of silence: no segments, and memory that does not grow with length: the peak RSS over 3 h is
    within 6 MB of that over 10 s, measured in the same run (what a process holds before any audio, its
    libraries among it, differs from machine to machine). What grows is the frames' probabilities, 4.3 MB
    at MarbleNet's 100 frames a second; the whole file as floats would be 691 MB."""
    def silence(name, seconds):
        path = os.path.join(WORK, name)
        if not os.path.exists(path):
            subprocess.run(["sox", "-n", "-r", "16000", "-c", "1", "-b", "16", path, "trim", "0", str(seconds)],
                           check=True)
        return path

    def peak_rss(model, path, seconds):
        p = subprocess.run([AUDIOC, "vad", "-m", model, "--format", "json", "--timings", path],
                           capture_output=True, text=True)
        j = json.loads(p.stdout) if p.returncode == 0 else {}
        assert p.returncode == 0 and j.get("segments") == [] and j.get("samples") == seconds * 16000, \
            f"{seconds} s of silence with {model}: {p.returncode} {p.stderr.strip()[:200]}"
        rss = [float(ln.split()[-2]) for ln in p.stderr.splitlines() if "peak RSS" in ln]
        assert rss, f"no peak RSS in {p.stderr!r}"
        return rss[0]

    short, long = silence("silence_10s.wav", 10), silence("silence_3h.wav", 10800)
    for model in (SILERO, MARBLE_DIR):
        base, peak = peak_rss(model, short, 10), peak_rss(model, long, 10800)
        print(f"silence, {os.path.basename(model)}: peak RSS {base} MB over 10 s, {peak} MB over 3 h")
        if SANITIZED:   # a sanitizer's own memory (ASan's quarantine) grows with the work
            assert peak < 400, f"3 h of silence: peak RSS {peak} MB, limit 400"
        else:
            assert peak - base < 6, f"3 h of silence: peak RSS {peak} MB against {base} MB over 10 s"


def test_long_m4a():
    """An hour of AAC in M4A (what a phone records) streams through FFmpeg: the
    peak memory is that of a minute but for FFmpeg's packet index (about 40
    bytes a packet: 2.3 MB an hour)."""
    peaks = {}
    for name, seconds in (("1min", 60), ("1h", 3600)):
        path = os.path.join(WORK, f"silence_{name}.m4a")
        if not os.path.exists(path):
            subprocess.run(["ffmpeg", "-loglevel", "error", "-y", "-f", "lavfi", "-i", "anullsrc=r=16000:cl=mono",
                            "-t", str(seconds), "-c:a", "aac", "-b:a", "16k", path], check=True)
        p = subprocess.run([AUDIOC, "vad", "-m", SILERO, "--format", "json", "--timings", path],
                           capture_output=True, text=True)
        j = json.loads(p.stdout) if p.returncode == 0 else {}
        assert p.returncode == 0 and j.get("segments") == [] and abs(j.get("samples", 0) - seconds * 16000) < 16000, f"{name} of silence in M4A: {p.returncode} {p.stderr.strip()[:200]} {j.get('samples')}"
        rss = [float(ln.split()[-2]) for ln in p.stderr.splitlines() if "peak RSS" in ln]
        if rss:
            peaks[name] = rss[0]
    print(f"M4A silence peak RSS: {peaks} MB")
    if not SANITIZED and len(peaks) == 2:
        assert peaks["1h"] < peaks["1min"] + 8, f"an hour of M4A peaks within 8 MB of a minute: {peaks} MB"


def test_long_transcription_memory():
    """Transcribing 1 min, 20 min and 3 h (1 min and 20 min under the
    sanitizers, which are ten times slower) with --no-vad (35 s chunks)
    peaks at the same memory: chunk buffers and scratch are reused, not
    grown with the length. With the VAD (the default) the peak stays below
    that, and grows only by what is kept per hour (a VAD probability per
    32 ms and the many short segments: at most 2 MB per hour). Under the
    sanitizers ASan's quarantine keeps every freed block, so only the first
    comparison holds there."""
    p = lambda name: os.path.join(WORK, name)  # noqa: E731
    parts = []
    for i, f in enumerate(SAMPLES):
        parts.append(p(f"sample{i}.wav"))
        subprocess.run(["sox", f, "-r", "16000", "-c", "1", "-b", "16", parts[-1], "pad", "0", "1"], check=True)
    subprocess.run(["sox", *parts, p("round.wav")], check=True)          # ~11 s
    lengths = {"1min": ("round.wav", 5), "20min": ("1min.wav", 20), "3h": ("20min.wav", 9)}
    hours = {"1min": 1 / 60, "20min": 1 / 3, "3h": 3}
    peaks = {"--no-vad": {}, "vad": {}}
    for name, (src, times) in lengths.items():
        if name == "3h" and SANITIZED:
            continue
        path = p(name + ".wav")
        if not os.path.exists(path):
            subprocess.run(["sox", p(src), path, "repeat", str(times - 1)], check=True)
        for mode in peaks:
            if mode == "vad" and name == "20min" and not SANITIZED:
                continue
            rc, out, err = audioc("transcribe", "--timings", "-t", "2", *([mode] if mode != "vad" else []), path)
            rss = [float(ln.split()[-4]) for ln in err.splitlines() if "peak RSS" in ln]
            assert rc == 0 and out.strip() != "" and rss, f"transcribe {mode} {name}: exit {rc}, {err.strip()[-300:]}"
            if rss:
                peaks[mode][name] = rss[0]
    print(f"transcription peak RSS by length: {peaks} MB")
    chunked, vad = peaks["--no-vad"], peaks["vad"]
    if len(chunked) >= 2:
        lo, hi = min(chunked.values()), max(chunked.values())
        assert hi <= 1.10 * lo, f"--no-vad: transcription peak RSS within 10 % across lengths: {chunked} MB"
    assert all(vad[k] <= chunked[k] for k in vad if k in chunked), f"with the VAD, peaks at most --no-vad's: {peaks}"
    if not SANITIZED and len(vad) == 2:
        per_hour = (vad["3h"] - vad["1min"]) / (hours["3h"] - hours["1min"])
        assert per_hour <= 2.0, f"with the VAD, peak RSS grows {per_hour:.2f} MB per hour of audio (at most 2): {vad}"

