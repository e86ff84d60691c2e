"""Parity of Vevo2's flow-matching transformer (src/models/vevo2/fm*) with
the PyTorch reference tests/ref/vevo2/fm_ref.py, on tiny random packages
(fm_ref.write_tiny: the FM folder at its package path, F32, F16 and BF16
weights; the reference runs on the same rounded weights).

The driver test_vevo2_fm checks, per package: the upsampled condition
(relative 1e-5), the estimator at a fixed (x, t, c) with the condition and
with a zero condition (1e-4), the sampler from injected noise at 32 and 4
steps (1e-3), seeded sampling bit-identical on 1 and 2 threads, the
progress callback and its cancel, steps 0, F <= 0 and injected noise that
is not finite. Here also: the _text variant loads (use_text_as_condition
parsed), and broken packages fail with errors naming the file and the key
or tensor.
"""
import functools
import os
import re
import shutil
import subprocess
import sys

import pytest

import testenv

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "vevo2"))
sys.path.insert(0, os.path.join(HERE, "hviske_asr"))
import fm_ref  # noqa: E402
import st_io  # noqa: E402

E = "diff_estimator."


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True)


@pytest.fixture(scope="module")
def work():
    path = os.path.join(testenv.WORK, "vevo2_fm")
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


@pytest.fixture(scope="module")
def fm_driver(driver):
    return driver("test_vevo2_fm")


@pytest.fixture(scope="module")
def tiny(work):
    """The tiny FM folder (seed 7) of a dtype, written once per module."""
    @functools.cache
    def get(dtype):
        return fm_ref.write_tiny(os.path.join(work, dtype.lower()), seed=7, dtype=dtype)
    return get


@pytest.mark.parametrize("dtype", ["F32", "F16", "BF16"])
def test_parity(dtype, tiny, work, fm_driver):
    """The driver's stages and sampler agree with the reference's goldens on the package of DTYPE."""
    fm = tiny(dtype)
    gold = os.path.join(work, "golden_" + dtype.lower())
    fm_ref.golden(fm, gold)
    p = run([fm_driver, fm, gold])
    sys.stderr.write(p.stderr)
    assert p.returncode == 0, f"{dtype}: test_vevo2_fm failed\n{p.stdout}"


def test_text_variant(tiny, fm_driver):
    """The _text variant loads with use_text_as_condition parsed."""
    p = run([fm_driver, "--load", tiny("F32") + "_text"])
    assert p.returncode == 0 and "text_condition 1" in p.stdout, f"_text variant: {p.stdout.strip()!r}"


def broken(work, name, base, config=None, drop=None, reshape=None):
    """A copy of the FM folder BASE with config.json edited (a function of
    its text), a tensor dropped or one row short."""
    out = os.path.join(work, "bad_" + name)
    if os.path.exists(out):
        shutil.rmtree(out)
    shutil.copytree(base, out)
    if config:
        with open(os.path.join(base, "config.json")) as f:
            text = config(f.read())
        with open(os.path.join(out, "config.json"), "w") as f:
            f.write(text)
    if drop or reshape:
        t = st_io.load(os.path.join(base, "model.safetensors"))
        if drop:
            del t[drop]
        if reshape:
            t[reshape] = t[reshape][:-1]
        st_io.save(os.path.join(out, "model.safetensors"), t)
    return out


def edit(key, value):
    """Replaces the value of KEY (a number, string or bool) in the config text."""
    return lambda text: re.sub(rf'("{key}": )[^,\n]+', lambda m: m.group(1) + value, text, count=1)


def remove(key):
    return lambda text: re.sub(rf'\s*"{key}": [^,\n]+,', "", text, count=1)


BAD = [
    ("missing", dict(drop=E + "layers.1.mlp.up_proj.weight"),
     ["model.safetensors", f"missing tensor '{E}layers.1.mlp.up_proj.weight'"]),
    ("shape", dict(reshape=E + "layers.0.input_layernorm.to_weight.bias"),
     ["model.safetensors", f"'{E}layers.0.input_layernorm.to_weight.bias'", "shape [63]", "expected [64]"]),
    ("upsampler", dict(reshape="resampling_layers.2.weight"),
     ["model.safetensors", "'resampling_layers.2.weight'", "expected [64, 64, 4]"]),
    ("no_key", dict(config=remove("num_layers")),
     ["config.json", "model.flow_matching_transformer.num_layers"]),
    ("type", dict(config=edit("hidden_size", '"64"')),
     ["config.json", "model.flow_matching_transformer.hidden_size", "must be an integer"]),
    ("heads", dict(config=edit("num_heads", "5")), ["config.json", "num_heads 5", "hidden_size 64"]),
    ("scale", dict(config=edit("cond_scale_factor", "2")), ["config.json", "cond_scale_factor 2"]),
    ("codebook", dict(config=edit("cond_codebook_size", "65")),
     ["model.safetensors", "'cond_emb.weight'", "expected [65, 64]"]),
    ("mels", dict(config=edit("num_mels", "80")), ["config.json", "preprocess.num_mels 80", "mel_dim 128"]),
    ("json", dict(config=lambda t: t.replace("{", "[", 2)), ["config.json"]),
]


@pytest.mark.parametrize("name,change,needles", BAD, ids=[b[0] for b in BAD])
def test_bad_package(name, change, needles, tiny, work, fm_driver):
    """A broken F32 package fails to load (exit 3) with an error naming the file and the key or tensor."""
    p = run([fm_driver, "--load", broken(work, name, tiny("F32"), **change)])
    msg = p.stdout.strip()
    assert p.returncode == 3 and all(n in msg for n in needles), f"bad input {name}: exit {p.returncode}, {msg!r}"
