"""Hviske v6 through the CLI and the server on a tiny random package
(tests/ref/hviske_v6/make_tiny.py, BF16 as published): a transcription in
every format, the options v6 refuses (another language, word timestamps,
sampling), long audio cut at silences where the reference's splitter cuts,
the server's answer equal to the CLI's, and broken packages: each fails with
an error naming the file and the key or tensor, never a crash (this file
runs in the sanitizer suite). The numbers are checked stage by stage in
tests/ref/test_hviske_v6_parity.py."""
import json
import os
import shutil
import sys

import numpy as np
import pytest

import packages
import testenv

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "ref", "hviske_v6"))
sys.path.insert(0, os.path.join(HERE, "..", "ref", "hviske_asr"))
import v6_ref  # noqa: E402

LIBRI = os.path.join(testenv.DATA, "asr_validation", "librispeech")
CLIPS = {"libri_short": "librispeech_test_other_7902-96591-0000.wav",
         "libri_long": "librispeech_test_clean_6930-75918-0001.wav"}
V6 = lambda: packages.hviske_v6("bf16")  # noqa: E731


@pytest.fixture(scope="module")
def work():
    testenv.require(*(os.path.join(LIBRI, c) for c in CLIPS.values()))
    return testenv.work("hviske_v6_cli")


def write_wav(path, x):
    import wave
    with wave.open(path, "wb") as w:
        w.setnchannels(1), w.setsampwidth(2), w.setframerate(16000)
        w.writeframes((np.clip(x, -1, 1) * 32767).astype("<i2").tobytes())


def test_formats_and_refusals(work):
    """Every output format; another language, word timestamps and sampling are clear errors."""
    wav = os.path.join(LIBRI, CLIPS["libri_short"])
    rc, text, err = testenv.audioc("transcribe", "--model", V6(), "--no-vad", wav)
    assert rc == 0 and text.strip(), err
    for fmt in ("json", "srt", "vtt"):
        rc, out, err = testenv.audioc("transcribe", "--model", V6(), "--no-vad", "-f", fmt, wav)
        assert rc == 0 and out.strip(), (fmt, err)
    assert json.loads(testenv.audioc("transcribe", "--model", V6(), "--no-vad", "-f", "json", wav)[1])["text"].strip() \
        == text.strip()
    rc, out, err = testenv.audioc("transcribe", "--model", V6(), wav)  # the default VAD
    assert rc == 0, err
    for args, needle in ((["--language", "en"], "language 'en' is not supported by this model (da)"),
                         (["--word-timestamps"], "no word timestamps"),
                         (["--temperature", "0.5"], "not by sampling")):
        rc, out, err = testenv.audioc("transcribe", "--model", V6(), "--no-vad", *args, wav)
        assert rc > 0 and needle in err, (args, rc, err)


def test_long_audio_chunks(work):
    """Audio above 30 s is cut at silences into chunks of at most 28 s, where the reference's splitter cuts."""
    testenv.require(os.path.join(LIBRI, CLIPS["libri_long"]))
    speech = v6_ref.read_audio(os.path.join(LIBRI, CLIPS["libri_long"]))
    gap = np.zeros(int(1.5 * 16000), np.float32)
    x = np.concatenate([speech, gap, speech, gap, speech[:5 * 16000]])
    wav = os.path.join(work, "long.wav")
    write_wav(wav, x)
    x = v6_ref.read_audio(wav)
    ends = v6_ref.silence_chunks(x)
    rc, out, err = testenv.audioc("transcribe", "--model", V6(), "--no-vad", "-b", "1", "-f", "json", wav)
    assert rc == 0, err
    segs = json.loads(out)["segments"]
    got = [round(s["end"] * 16000) for s in segs]
    assert len(ends) > 1 and all(b - a <= 448000 for a, b in zip([0] + ends, ends))
    assert got == ends, f"chunk ends {got}, reference {ends}"




def broken(work, base, name, config=None, drop_key=None, drop_tensor=None, drop_token=None):
    """A copy of the package BASE with config.json changed (CONFIG: dotted keys to values), a key
    dropped, a tensor dropped or an added token removed from tokenizer.json."""
    out = os.path.join(work, "bad_" + name)
    if os.path.exists(out):
        shutil.rmtree(out)
    os.makedirs(out)
    for f in ("config.json", "tokenizer.json", "tokenizer_config.json", "model.safetensors"):
        os.symlink(os.path.abspath(os.path.join(base, f)), os.path.join(out, f))
    if config or drop_key:
        with open(os.path.join(base, "config.json")) as f:
            cfg = json.load(f)
        for key, value in (config or {}).items():
            *path, last = key.split(".", 1) if not key.startswith("style_tokens") else key.split(".", 1)
            obj = cfg
            for p in path:
                obj = obj[p]
            obj[last] = value
        if drop_key:
            *path, last = drop_key.split(".", 1)
            obj = cfg
            for p in path:
                obj = obj[p]
            del obj[last]
        os.remove(os.path.join(out, "config.json"))
        with open(os.path.join(out, "config.json"), "w") as f:
            json.dump(cfg, f)
    if drop_tensor:
        import st_io
        os.remove(os.path.join(out, "model.safetensors"))
        st_io.edit(os.path.join(base, "model.safetensors"), os.path.join(out, "model.safetensors"), drop_tensor)
    if drop_token:
        with open(os.path.join(base, "tokenizer.json"), encoding="utf-8") as f:
            tj = json.load(f)
        tj["added_tokens"] = [t for t in tj["added_tokens"] if t["content"] != drop_token]
        os.remove(os.path.join(out, "tokenizer.json"))
        with open(os.path.join(out, "tokenizer.json"), "w", encoding="utf-8") as f:
            json.dump(tj, f, ensure_ascii=False)
    return out


BAD = [  # name, change, what the error names
    ("rotary_dim", dict(config={"whisper.encoder_rotary_dim": 20}), ["config.json", "whisper.encoder_rotary_dim", "20"]),
    ("rotary_odd", dict(config={"whisper.encoder_rotary_dim": 7}), ["config.json", "encoder_rotary_dim", "even"]),
    ("enc_heads", dict(config={"whisper.encoder_attention_heads": 5}), ["config.json", "encoder_attention_heads", "5"]),
    ("stack", dict(config={"stack": 0}), ["config.json", "'stack'"]),
    ("stack_size", dict(config={"stack": 3}), ["model.safetensors", "norm.weight", "192"]),
    ("kv_heads", dict(config={"qwen.num_key_value_heads": 3}), ["config.json", "qwen.num_key_value_heads 3"]),
    ("no_width", dict(drop_key="qwen.hidden_size"), ["config.json", "hidden_size"]),
    ("no_style", dict(drop_key="style_tokens.<|punc|>"), ["config.json", "<|punc|>"]),
    ("no_bos", dict(drop_key="bos_token_id"), ["config.json", "bos_token_id"]),
    ("eos_range", dict(config={"eos_token_id": 200000}), ["config.json", "eos_token_id", "200000"]),
    ("no_tensor", dict(drop_tensor="llm.model.layers.1.self_attn.q_norm.weight"),
     ["model.safetensors", "llm.model.layers.1.self_attn.q_norm.weight"]),
    ("no_enc_tensor", dict(drop_tensor="encoder.layers.1.fc2.bias"), ["model.safetensors", "encoder.layers.1.fc2.bias"]),
    ("no_proj", dict(drop_tensor="proj.weight"), ["model.safetensors", "proj.weight"]),
    ("tokenizer", dict(drop_token="<|punc|>"), ["tokenizer.json", "151672", "<|punc|>"]),
]


@pytest.mark.parametrize("name,change,needles", BAD, ids=[b[0] for b in BAD])
def test_bad_package(name, change, needles, work):
    """A broken package fails to load with an error naming the file and the key or tensor, not a crash."""
    bad = broken(work, V6(), name, **change)
    wav = os.path.join(LIBRI, CLIPS["libri_short"])
    rc, out, err = testenv.audioc("transcribe", "--model", bad, "--no-vad", wav)
    assert rc > 0 and all(n in err for n in needles), f"{name}: exit {rc}, {err!r} lacks {needles}"
    assert "Sanitizer" not in err and "runtime error" not in err, err


def test_server_text(work):
    """audioc-server answers a transcription with the CLI's text; a language other than Danish is a 400."""
    sys.path.insert(0, os.path.join(HERE, "..", "server"))
    import serverlib
    os.makedirs(serverlib.WORK, exist_ok=True)
    rc, want, err = testenv.audioc("transcribe", "--model", V6(), "--no-vad", os.path.join(LIBRI, CLIPS["libri_short"]))
    assert rc == 0, err
    want = want.strip()
    srv = serverlib.Server("hviske_v6", ["--model", f"v6={V6()}", "--no-vad", "--threads", "1"])
    try:
        with open(os.path.join(LIBRI, CLIPS["libri_short"]), "rb") as f:
            wav = f.read()
        r = serverlib.transcribe(srv.port, wav, model="v6")
        assert r.status == 200, (r.status, r.body[:500], srv.stderr()[-500:])
        assert r.json()["text"].strip() == want
        r = serverlib.transcribe(srv.port, wav, model="v6", language="sv")
        assert r.status == 400 and b"language 'sv'" in r.body, (r.status, r.body[:300])
    finally:
        srv.stop()

