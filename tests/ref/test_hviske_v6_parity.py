"""Parity of Hviske v6 (src/models/hviske_v6) with the PyTorch reference
tests/ref/hviske_v6/v6_ref.py, on tiny random packages in the published
layout (tests/ref/hviske_v6/make_tiny.py: BF16 as published, F32 holding
the same values, and one that also stores llm.lm_head.weight and an unused
encoder.embed_positions.weight).

The driver test_hviske_v6_stages writes each stage of a chunk; compared
here: log-mel features (abs 1e-4: log10 units), encoder output and projected
audio rows (1e-4 of the largest value), decoder logits under teacher
forcing (relative 1e-4), greedy and 2-beam ids (identical; the smallest
top-1/top-2 log-probability margin of the reference is printed), the text
through the CLI equal to the driver's. Also: the tokenizer against Hugging
Face tokenizers, and ac_model_probe telling v5.3 and v6 apart. The CLI,
server, chunking and bad-package cases are tests/cli/test_hviske_v6_cli.py.
"""
import functools
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import packages
import testenv

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "hviske_v6"))
import v6_ref  # noqa: E402

LIBRI = os.path.join(testenv.DATA, "asr_validation", "librispeech")
CLIPS = {  # name: (wav under LIBRI or None for a synthetic clip, samples)
    "libri_short": "librispeech_test_other_7902-96591-0000.wav",
    "libri_long": "librispeech_test_clean_6930-75918-0001.wav",
    "noise_half_s": None,
}


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


@pytest.fixture(scope="module")
def work():
    return testenv.work("hviske_v6_parity")


@pytest.fixture(scope="module")
def stages(driver):
    return driver("test_hviske_v6_stages")


def clip_samples(name):
    if CLIPS[name] is None:
        return (np.random.default_rng(7).normal(0, 0.1, 8000)).astype(np.float32)
    return v6_ref.read_audio(os.path.join(LIBRI, CLIPS[name]))


@pytest.fixture(scope="module")
def clip(work):
    @functools.cache
    def get(name):
        if CLIPS[name]:
            testenv.require(os.path.join(LIBRI, CLIPS[name]))
        path = os.path.join(work, name + ".f32")
        clip_samples(name).astype("<f4").tofile(path)
        return path
    return get


@pytest.fixture(scope="module")
def package():
    return functools.cache(lambda kind: {
        "bf16": lambda: packages.hviske_v6("bf16"),
        "f32": lambda: packages.hviske_v6("f32"),
        "bf16_head_pos": lambda: packages.hviske_v6("bf16", lm_head=True, pos_table=True),
    }[kind]())


@pytest.fixture(scope="module")
def golden(work, package, clip):
    """The reference's files for (package kind, clip)."""
    @functools.cache
    def get(kind, name):
        out = os.path.join(work, f"gold_{kind}_{name}")
        p = run([testenv.PY, os.path.join(HERE, "hviske_v6", "v6_ref.py"), package(kind), clip(name), out])
        assert p.returncode == 0, f"reference failed\n{p.stderr[-2000:]}"
        return out
    return get


@pytest.fixture(scope="module")
def c_run(work, package, clip, golden, stages):
    @functools.cache
    def get(kind, name, gold_kind=None):
        gold = golden(gold_kind or kind, name)
        out = os.path.join(work, f"c_{kind}_{name}")
        os.makedirs(out, exist_ok=True)
        p = run([stages, package(kind), clip(name), gold, out])
        assert p.returncode == 0, f"test_hviske_v6_stages failed ({p.returncode})\n{p.stdout}{p.stderr[-2000:]}"
        return out
    return get


def f32(folder, name):
    return np.fromfile(os.path.join(folder, name), "<f4")


def i32(folder, name):
    return np.fromfile(os.path.join(folder, name), "<i4").tolist()


@pytest.mark.parametrize("kind,name", [("bf16", "libri_short"), ("bf16", "libri_long"), ("bf16", "noise_half_s"),
                                       ("f32", "libri_short")])
def test_stages(kind, name, golden, c_run):
    """Features, encoder, audio rows, teacher-forced logits and the ids of both searches agree."""
    gold, out = golden(kind, name), c_run(kind, name)
    for stage, tol, rel in (("mel.f32", 1e-4, False), ("enc.f32", 1e-4, True), ("tokens.f32", 1e-4, True),
                            ("tf_logits.f32", 1e-4, True)):
        want, got = f32(gold, stage), f32(out, stage)
        assert want.shape == got.shape, f"{kind}/{name} {stage}: {got.shape} values, expected {want.shape}"
        err = float(np.max(np.abs(want - got)))
        bound = tol * (float(np.max(np.abs(want))) if rel else 1.0)
        sys.stderr.write(f"{kind}/{name} {stage}: max abs {err:.3g} (bound {bound:.3g})\n")
        assert err <= bound, f"{kind}/{name} {stage}: max difference {err:.3g} > {bound:.3g}"
    with open(os.path.join(gold, "margins.txt")) as f:
        sys.stderr.write(f"{kind}/{name} margins: {f.read()}")
    for ids in ("greedy.i32", "beam.i32"):
        assert i32(out, ids) == i32(gold, ids), f"{kind}/{name} {ids}: {i32(out, ids)} != {i32(gold, ids)}"


def test_f32_same_as_bf16(golden):
    """The F32 file holds the BF16 file's values: the reference's ids are the same."""
    a, b = golden("bf16", "libri_short"), golden("f32", "libri_short")
    for ids in ("greedy.i32", "beam.i32"):
        assert i32(a, ids) == i32(b, ids)


def test_stored_head_and_table_ignored(c_run):
    """A stored llm.lm_head.weight and encoder.embed_positions.weight change nothing (the head is the
    embedding; positions are rotary)."""
    a, b = c_run("bf16", "libri_short"), c_run("bf16_head_pos", "libri_short", "bf16")
    for stage in ("tokens.f32", "tf_logits.f32"):
        assert np.array_equal(f32(a, stage), f32(b, stage)), stage
    assert i32(a, "beam.i32") == i32(b, "beam.i32")


def test_cli_text(package, clip, c_run, work):
    """audioc transcribe (2 beams by default, no VAD) prints the driver's text."""
    out = c_run("bf16", "libri_short")
    wav = os.path.join(work, "libri_short.wav")
    shutil.copy(os.path.join(LIBRI, CLIPS["libri_short"]), wav)
    rc, text, err = testenv.audioc("transcribe", "--model", package("bf16"), "--no-vad", wav)
    with open(os.path.join(out, "text.txt"), encoding="utf-8") as f:
        want = f.read()
    assert rc == 0 and text.strip() == want, f"exit {rc}: {text!r} != {want!r}\n{err}"
    rc, probe, err = testenv.audioc("transcribe", "--model", package("bf16"), "--language", "en", wav)
    assert rc != 0 and "language 'en'" in err and "(da)" in err, err


ORACLE_TEXTS = ["Hej, hvordan går det? Jeg hedder Søren og bor i Århus.",
                "Æbler, øl og blåbærgrød – 1.234,50 kr. i København!",
                "<|cased|><|punc|><|im_start|>", "<|nocase|><|nopunc|><|im_start|>hej<|im_end|>",
                "  flere   mellemrum\tog\nlinjer  ", "<think>tanke</think> svar"]


def test_tokenizer_oracle(package):
    """The package's tokenizer gives Hugging Face tokenizers' ids on Danish text and on the prompt's
    tokens, and its decoding (special tokens skipped)."""
    node_dir = os.path.join(HERE, "..", "node")
    if not (shutil.which("node") and os.path.isdir(os.path.join(node_dir, "node_modules", "@anush008", "tokenizers"))):
        pytest.skip("Hugging Face tokenizers is not installed (node, tests/node/node_modules)")
    pkg = package("bf16")
    tok = os.path.join(pkg, "tokenizer.json")
    rc, out, err = testenv.audioc("tokenize", "--model", pkg, "--", *ORACLE_TEXTS)
    assert rc == 0, err
    ours = [json.loads(line) for line in out.split("\n") if line]
    seqs = [o["ids"] if isinstance(o, dict) else o for o in ours]
    p = run(["node", os.path.join(node_dir, "bpe_oracle.js")], cwd=node_dir,
            input=json.dumps({"tokenizer": tok, "texts": ORACLE_TEXTS,
                              "decode": [{"ids": s, "skip": True} for s in seqs]}))
    assert p.returncode == 0, p.stderr
    want = json.loads(p.stdout)
    assert seqs == want["ids"]
    assert [151670, 151672, 151644] in seqs
    rc, out, err = testenv.audioc("tokenize", "--model", pkg, "--decode", "--skip-special",
                                  input="".join(json.dumps(s) + "\n" for s in seqs))
    got = [json.loads(line) for line in out.split("\n") if line]
    got = [g["text"] if isinstance(g, dict) else g for g in got]
    assert rc == 0 and got == want["decoded"], (got, want["decoded"])






def test_probe_tells_v53_from_v6(package, work):
    """ac_model_probe names hviske_v6 for a v6 folder and its model.safetensors, hviske_asr for a v5.3
    (Cohere layout) folder; a bare v6 model.safetensors transcribes as its folder does."""
    import ctypes
    if testenv.SANITIZED:  # an ASan library cannot load into a plain python
        pytest.skip("sanitized build")
    if not os.path.exists(testenv.AUDIOC_SHARED):
        pytest.skip(f"no shared library at {testenv.AUDIOC_SHARED}")
    lib = ctypes.CDLL(testenv.AUDIOC_SHARED)
    lib.ac_model_probe.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(ctypes.c_int)]

    def probe(path):
        fam, task = ctypes.c_char_p(), ctypes.c_int()
        rc = lib.ac_model_probe(path.encode(), ctypes.byref(fam), ctypes.byref(task))
        return rc, fam.value.decode() if fam.value else None

    v6 = package("bf16")
    assert probe(v6) == (0, "hviske_v6")
    assert probe(os.path.join(v6, "model.safetensors")) == (0, "hviske_v6")
    assert probe(packages.hviske(0)) == (0, "hviske_asr")
    wav = os.path.join(LIBRI, CLIPS["noise_half_s"] or CLIPS["libri_short"])
    a = testenv.audioc("transcribe", "--model", v6, "--no-vad", wav)
    b = testenv.audioc("transcribe", "--model", os.path.join(v6, "model.safetensors"), "--no-vad", wav)
    assert a[0] == 0 and a[:2] == b[:2], (a, b)
