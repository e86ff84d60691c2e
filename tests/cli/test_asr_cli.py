"""audioc transcribe as a user runs it, on a tiny random cohere_asr package
(tests/ref/hviske_asr/make_tiny.py, real tokenizer): output formats, audio
containers, options, and bad input (broken packages, configs, tokenizers,
languages, audio), each a clear error and never a crash."""
import json
import os
import shutil
import subprocess

import pytest

import packages
import testenv
from common import BUNDLED_MODEL, SILERO, audioc, clean_failure, read_st, write_st
from testenv import TOKENIZER

BASE_CONFIG = os.path.join(testenv.DATA, "cohere_asr_base/config.json")
WORK = testenv.work("asr_cli")


def sh(*cmd):
    subprocess.run(cmd, check=True, capture_output=True)


@pytest.fixture(scope="module")
def model(hviske_tiny):
    """The tiny Hviske package (tests/conftest.py)."""
    return hviske_tiny


@pytest.fixture(scope="module")
def clip():
    """espeak-ng Danish speech, 16 kHz."""
    raw = os.path.join(WORK, "raw.wav")
    sh("espeak-ng", "-v", "da", "-w", raw, "Hej med dig, hvordan går det i dag?")
    clip = os.path.join(WORK, "clip.wav")
    sh("sox", "-D", raw, "-r", "16000", "-b", "16", clip)
    return clip


@pytest.fixture(scope="module")
def long(clip):
    """Four clips in a row: several 3 s chunks with the tiny config."""
    long = os.path.join(WORK, "long.wav")
    sh("sox", "-D", clip, clip, clip, clip, long)
    return long


def transcribe(model, *args, **kw):
    return audioc("transcribe", "-m", model, *args, **kw)


def test_help(model, clip):
    rc, out, _ = audioc("transcribe", "--help")
    for opt in ("--model", "--language", "--beam-size", "--temperature", "--top-k", "--top-p", "--seed",
                "--no-punctuation", "--max-new-tokens", "--format", "--threads", "--timings", "--tokens",
                "--vad", "--no-vad", "--word-timestamps", "--max-segment-length", "--max-line-width"):
        assert opt in out, f"transcribe --help documents {opt}"
    rc, out, err = audioc("transcribe", clip)
    want = transcribe(BUNDLED_MODEL, clip)
    assert rc == 0 and (rc, out) == want[:2], f"no --model: the bundled model's answer ({rc}, {err[-200:]})"
    env = dict(os.environ, AUDIOC_ASR_MODEL=os.path.join(WORK, "no-such-model"))
    rc, _, err = audioc("transcribe", clip, env=env)
    clean_failure("$AUDIOC_ASR_MODEL names a missing folder", rc, err, "no-such-model")
    rc, _, err = transcribe(model, "--beam-size", "2", "--temperature", "0.5", clip)
    assert rc == 2 and "beam-size 1" in err, "sampling with beams: usage error"


def test_formats(model, clip, long):
    rc, text, err = transcribe(model, clip)
    assert rc == 0 and text.strip() != "" and text.count("\n") == 1, f"text: one line ({rc}, {err.strip()})"
    rc, out, _ = transcribe(model, "--no-vad", "--format", "json", "--tokens", long)
    j = json.loads(out)
    segs = j["segments"]
    assert len(segs) >= 3 and segs[0]["start"] == 0 and abs(segs[-1]["end"] - j["duration"]) < 1e-3, f"json: chunk times cover the audio ({[(s['start'], s['end']) for s in segs]})"
    assert all(segs[i]["end"] == segs[i + 1]["start"] for i in range(len(segs) - 1)), "json: chunks are contiguous"
    assert all(isinstance(s["tokens"], list) and s["tokens"] for s in segs), "json: token ids"
    assert j["text"] == " ".join(s["text"] for s in segs if s["text"]), "json: text joins the chunks"
    rc, out, _ = transcribe(model, "--no-vad", "--format", "srt", long)
    blocks = [b for b in out.strip().split("\n\n") if b]
    assert blocks[0].startswith("1\n00:00:00,000 --> 00:00:0") and len(blocks) == len(segs), f"srt: {blocks[:1]}"
    rc, out, _ = transcribe(model, "--no-vad", "--format", "vtt", long)
    assert out.startswith("WEBVTT\n\n00:00:00.000 --> 00:00:0"), f"vtt: {out[:40]!r}"
    rc, out, err = transcribe(model, "--timings", clip)
    for word in ("load", "front end", "encoder", "prefill", "ms/token", "real-time factor", "peak RSS"):
        assert word in err, f"--timings reports {word}"


def test_containers(model, clip):
    _, want, _ = transcribe(model, clip)
    for ext in ("flac", "wav", "ogg", "opus", "mp3"):
        path = os.path.join(WORK, "converted." + ext)
        rc, _, err = audioc("convert", clip, path)
        rc, out, err = transcribe(model, path)
        assert rc == 0 and out.strip(), f".{ext}: transcribed ({err.strip()})"
        if ext in ("flac", "wav"):  # lossless: the same samples, the same text
            assert out == want, f".{ext}: same text as the source ({out!r} vs {want!r})"
    # the containers phones and browsers record (through FFmpeg), and ALAC: lossless, the same text
    for name, codec in (("clip.m4a", "aac"), ("clip.mp4", "aac"), ("clip.aac", "aac"), ("clip.webm", "libopus"),
                        ("clip.mkv", "libvorbis"), ("alac.m4a", "alac")):
        path = os.path.join(WORK, name)
        sh("ffmpeg", "-loglevel", "error", "-y", "-i", clip, "-c:a", codec, path)
        rc, out, err = transcribe(model, path)
        assert rc == 0 and out.strip(), f"{name} ({codec}): transcribed ({err.strip()})"
        if codec == "alac":
            assert out == want, f"{name}: same text as the source ({out!r} vs {want!r})"
        rc, out2, err = transcribe(model, "-", stdin=open(path, "rb"))
        assert rc == 0 and out2 == out, f"{name} on standard input: the file's text ({err.strip()})"
    m4a = open(os.path.join(WORK, "clip.m4a"), "rb").read()
    cut = os.path.join(WORK, "cut.m4a")
    for n in (8, 100, len(m4a) // 2):   # ffmpeg writes the index at the end: every cut loses it
        open(cut, "wb").write(m4a[:n])
        rc, _, err = transcribe(model, cut)
        clean_failure(f"M4A cut at {n} bytes", rc, err, "cut.m4a: not a readable audio file (MP4/M4A")
    open(cut, "wb").write(m4a[:8] + os.urandom(4000))
    rc, _, err = transcribe(model, cut)
    clean_failure("M4A header and random bytes", rc, err, "cut.m4a: not a readable audio file (MP4/M4A")
    video = os.path.join(WORK, "video.mp4")   # pictures, no sound
    sh("ffmpeg", "-loglevel", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=32x32:rate=5", "-t", "1",
       "-c:v", "mpeg4", video)
    rc, _, err = transcribe(model, video)
    clean_failure("an MP4 without sound", rc, err, "video.mp4: not a readable audio file (MP4/M4A: no audio stream)")
    webm = open(os.path.join(WORK, "clip.webm"), "rb").read()
    cut = os.path.join(WORK, "cut.webm")
    open(cut, "wb").write(webm[:100])
    rc, _, err = transcribe(model, cut)
    clean_failure("WebM cut in its header", rc, err, "cut.webm: not a readable audio file (Matroska/WebM")
    open(cut, "wb").write(webm[:len(webm) // 2])   # half the clusters: the first half of the audio
    rc, out, err = transcribe(model, cut)
    assert rc == 0, f"WebM cut in its audio: what is there is transcribed ({err.strip()})"
    stereo = os.path.join(WORK, "stereo44k.wav")
    sh("sox", "-D", clip, "-r", "44100", "-c", "2", stereo)
    rc, out, err = transcribe(model, stereo)
    assert rc == 0 and out.strip(), f"44.1 kHz stereo: {err.strip()}"


def test_options(model, clip):
    a = transcribe(model, "--temperature", "0.9", "--seed", "7", clip)[1]
    b = transcribe(model, "--temperature", "0.9", "--seed", "7", clip)[1]
    assert a == b and a.strip(), "sampling with a seed is reproducible"
    rc, out, _ = transcribe(model, "--format", "json", "--tokens", "--max-new-tokens", "3", clip)
    assert rc == 0 and len(json.loads(out)["segments"][0]["tokens"]) <= 3, "--max-new-tokens 3"
    rc, out, err = transcribe(model, "--language", "en", clip)
    assert rc == 0, f"--language en (supported by the tiny config): {err.strip()}"
    # a language the model lacks is a usage error before any audio is read
    rc, out, err = transcribe(model, "--language", "fr", clip, clip)
    assert rc == 2 and out == "" and err.count("\n") == 1, f"unsupported language: usage error, once ({rc}, {err!r})"
    assert "language 'fr' is not supported by this model (da, en)" in err, f"unsupported language: {err.strip()}"
    rc, out, err = transcribe(model, "-l", "auto", clip)
    assert rc == 2 and "language 'auto' is not supported by this model (da, en)" in err and "-l" in err, f"-l auto: usage error naming the languages ({rc}, {err.strip()})"
    for threads in ("1", "2"):
        rc, out, _ = transcribe(model, "--threads", threads, "--format", "json", "--tokens", clip)
        assert rc == 0, f"--threads {threads}"
    empty = os.path.join(WORK, "empty.wav")
    sh("sox", "-n", "-r", "16000", "-c", "1", "-b", "16", empty, "trim", "0", "0")
    rc, out, err = transcribe(model, "--format", "json", empty)
    assert rc == 0 and json.loads(out)["text"] == "", f"0-sample audio: empty text ({err.strip()})"


def test_words(clip, long):
    """--word-timestamps: JSON words that spell each segment's text, ordered in time, inside their segment;
    --max-segment-length / --max-line-width: SRT/VTT cues and lines of at most that many characters."""
    for path in (clip, long):
        rc, out, err = transcribe(BUNDLED_MODEL, "--word-timestamps", "--format", "json", path)
        j = json.loads(out) if rc == 0 else {}
        words, segs = j.get("words", []), j.get("segments", [])
        assert rc == 0 and words, f"--word-timestamps: words ({rc}, {err.strip()[-200:]})"
        for i, g in enumerate(segs):
            mine = [w for w in words if w["segment"] == i]
            assert " ".join(w["word"] for w in mine) == g["text"], f"the words of segment {i} spell {g['text']!r}"
            assert all(g["start"] - 1e-3 <= w["start"] <= w["end"] <= g["end"] + 1e-3 for w in mine), f"segment {i}: its words lie inside it ({g['start']}, {g['end']}): {mine}"
        assert all(a["start"] <= b["start"] for a, b in zip(words, words[1:])), "words are ordered in time"
        assert (all(isinstance(g.get("compression_ratio"), float) and g.get("no_speech_prob", 0) is None for g in segs)
                and j.get("usage", {}).get("type") == "duration"), f"json: compression_ratio, no_speech_prob, usage {j}"
    rc, out, _ = transcribe(BUNDLED_MODEL, "--format", "json", clip)
    assert rc == 0 and "words" not in json.loads(out), "no words unless asked for"
    rc, out, _ = transcribe(BUNDLED_MODEL, "--format", "srt", "--max-segment-length", "16", "--max-line-width", "8",
                            long)
    cues = [b.split("\n")[2:] for b in out.strip().split("\n\n") if b]
    text = " ".join(" ".join(c) for c in cues)
    rc2, plain, _ = transcribe(BUNDLED_MODEL, long)
    assert rc == 0 and len(cues) >= 2 and text == plain.strip(), f"srt cues keep the text: {text!r} vs {plain!r}"
    assert all(len(" ".join(c)) <= 16 or len(c) == 1 for c in cues), f"cues of at most 16 characters: {cues}"
    assert all(len(ln) <= 8 or " " not in ln for c in cues for ln in c), f"lines of at most 8 characters: {cues}"
    rc, out, _ = transcribe(BUNDLED_MODEL, "--format", "vtt", "--max-segment-length", "16", long)
    assert rc == 0 and out.startswith("WEBVTT\n\n00:"), f"vtt with --max-segment-length: {out[:40]!r}"


def test_vad_cut(model, clip):
    """--vad: one segment per speech region the VAD finds, within it; silence is skipped."""
    gapped = os.path.join(WORK, "gapped.wav")
    sh("sox", clip, os.path.join(WORK, "pad.wav"), "pad", "0.5", "3")
    sh("sox", os.path.join(WORK, "pad.wav"), clip, gapped)
    # with the settings a transcription uses (ac_asr_vad_options_default)
    rc, out, err = audioc("vad", "--model", SILERO, "--format", "json", "--speech-pad-ms", "400", "--min-silence-ms",
                          "500", "--min-speech-ms", "0", "--max-speech-s", "30", gapped)
    speech = json.loads(out)["segments"]
    rc2, out2, err2 = transcribe(model, "--vad", SILERO, "--format", "json", gapped)
    assert rc == 0 and rc2 == 0, f"--vad runs ({err.strip()} {err2.strip()})"
    segs = json.loads(out2)["segments"]
    assert len(speech) == 2, f"the VAD finds the two utterances ({len(speech)})"
    # each speech region is one chunk with the tiny config's short clips, or a few
    inside = all(any(g["start"] >= s["start"] - 1e-3 and g["end"] <= s["end"] + 1e-3 for s in speech) for g in segs)
    assert segs and inside, f"every --vad segment lies inside a speech region ({segs}, {speech})"
    # times are kept to the speech itself with the VAD's default 30 ms margin, not the 400 ms padding
    rc3, out3, _ = audioc("vad", "--model", SILERO, "--format", "json", "--speech-pad-ms", "30", "--min-silence-ms",
                          "500", "--min-speech-ms", "0", "--max-speech-s", "30", gapped)
    starts = {round(s["start"], 2) for s in json.loads(out3)["segments"]} if rc3 == 0 else {-1}
    assert starts <= {round(g["start"], 2) for g in segs}, f"a segment starts 30 ms before each speech region's speech ({starts}, {segs})"
    rc, _, err = transcribe(model, "--vad", os.path.join(WORK, "clip.wav"), clip)
    assert rc == 1 and "VAD" in err, f"--vad with a file that is no VAD model: clear error ({err.strip()})"


def test_short_word():
    """A one-word answer is speech however short: Silero's own 250 ms minimum drops "Ti" said
    quickly (about 200 ms heard as speech); a transcription keeps it (faster-whisper's 0)."""
    raw, word = os.path.join(WORK, "ti_raw.wav"), os.path.join(WORK, "ti.wav")
    sh("espeak-ng", "-v", "da", "-s", "200", "-a", "60", "-w", raw, "ti")
    sh("sox", raw, "-r", "16000", word, "pad", "0.8", "0.8")
    rc, out, _ = audioc("vad", "--model", SILERO, "--format", "json", "--min-speech-ms", "250", word)
    assert rc == 0 and json.loads(out)["segments"] == [], f"Silero's 250 ms minimum finds no speech in it ({out[:200]})"
    rc, out, err = transcribe(BUNDLED_MODEL, word)
    assert rc == 0 and out.strip(), f"transcribed with the defaults, it gives text ({out.strip()!r} {err.strip()})"


def broken_copy(model, name, header_change=None, config_change=None, tokenizer=None):
    d = os.path.join(WORK, name)
    if os.path.exists(d):
        shutil.rmtree(d)
    shutil.copytree(model, d)
    if header_change:
        header, data = read_st(os.path.join(model, "model.safetensors"))
        extra = header_change(header, len(data))
        write_st(os.path.join(d, "model.safetensors"), header, data + (extra or b""))
    if config_change:
        cfg = json.load(open(os.path.join(model, "config.json")))
        config_change(cfg)
        json.dump(cfg, open(os.path.join(d, "config.json"), "w"))
    if tokenizer is not None:
        open(os.path.join(d, "tokenizer.model"), "wb").write(tokenizer)
    return d


def test_bad_packages(model, clip):
    def drop(h, n):
        del h["encoder.layers.1.norm_out.bias"]
    rc, _, err = transcribe(broken_copy(model, "missing", header_change=drop), clip)
    clean_failure("missing tensor", rc, err, "missing tensor 'encoder.layers.1.norm_out.bias'")

    def transpose(h, n):
        h["encoder.layers.0.feed_forward1.linear1.weight"]["shape"] = [64, 256]
    rc, _, err = transcribe(broken_copy(model, "shape", header_change=transpose), clip)
    clean_failure("wrong shape", rc, err, "'encoder.layers.0.feed_forward1.linear1.weight' has shape [64, 256]")

    def to_i64(h, n):  # the right shape, as I64 values appended to the data
        t = h["encoder.layers.0.norm_out.bias"]
        t["dtype"], t["data_offsets"] = "I64", [n, n + 8 * t["shape"][0]]
        return bytes(8 * t["shape"][0])
    rc, _, err = transcribe(broken_copy(model, "dtype", header_change=to_i64), clip)
    clean_failure("wrong dtype", rc, err, "dtype I64")

    def no_dmodel(c):
        del c["encoder"]["d_model"]
    rc, _, err = transcribe(broken_copy(model, "nokey", config_change=no_dmodel), clip)
    clean_failure("config without encoder.d_model", rc, err, "missing key 'encoder.d_model'")

    def derivable(c):
        del c["vocab_size"], c["min_energy_window_samples"]
    rc, out, err = transcribe(broken_copy(model, "derivable", config_change=derivable), clip)
    assert rc == 0 and out.strip(), f"config without vocab_size and min_energy_window_samples loads ({err.strip()})"

    def wrong_type(c):
        c["model_type"] = "whisper"
    rc, _, err = transcribe(broken_copy(model, "type", config_change=wrong_type), clip)
    clean_failure("model_type whisper", rc, err, "model_type 'whisper' is not cohere_asr")

    rc, _, err = transcribe(broken_copy(model, "tok", tokenizer=b"this is not a tokenizer\n" * 10), clip)
    clean_failure("tokenizer.model that is not one", rc, err, "not a SentencePiece model")
    tok = open(TOKENIZER, "rb").read()
    rc, _, err = transcribe(broken_copy(model, "tokcut", tokenizer=tok[:len(tok) // 3]), clip)
    clean_failure("truncated tokenizer.model", rc, err, "tokenizer.model")

    d = broken_copy(model, "noweights")
    os.remove(os.path.join(d, "model.safetensors"))
    rc, _, err = transcribe(d, clip)
    clean_failure("no weights", rc, err, "model.safetensors: cannot open")
    # the real Cohere base config.json (no vocab_size, no min_energy_window_samples)
    # parses: the first complaint is about the absent weights
    d = os.path.join(WORK, "base_config")
    os.makedirs(d, exist_ok=True)
    shutil.copy(BASE_CONFIG, d)
    shutil.copy(TOKENIZER, d)
    rc, _, err = transcribe(d, clip)
    clean_failure("real base config without weights", rc, err, "model.safetensors: cannot open")

    # a single-file GGUF package, whole and cut short
    gguf = packages.hviske_gguf("q8_0")
    rc, out, err = transcribe(gguf, clip)
    assert rc == 0 and out.strip(), f"Q8_0 GGUF package transcribes ({err.strip()})"
    blob = open(gguf, "rb").read()
    cut = os.path.join(WORK, "cut.gguf")
    for n in (10, 1000, len(blob) // 2, len(blob) - 5):
        open(cut, "wb").write(blob[:n])
        rc, _, err = transcribe(cut, clip)
        clean_failure(f"GGUF cut at {n} bytes", rc, err, "cut.gguf")

    text = os.path.join(WORK, "text.wav")
    open(text, "w").write("not audio\n" * 50)
    rc, _, err = transcribe(model, text)
    clean_failure("non-audio bytes", rc, err, "text.wav: not a readable audio file")

