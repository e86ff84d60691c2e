#!/usr/bin/python3
"""Parity of Vevo2's flow-matching transformer (src/models/vevo2/fm*) with
the PyTorch reference tests/ref/vevo2/fm_ref.py, on tiny random packages
(fm_ref.write_tiny: the FM folder at its package path, F32, F16 and BF16
weights; the reference runs on the same rounded weights).

test_vevo2_fm checks, per package: the upsampled condition (relative
1e-5), the estimator at a fixed (x, t, c) with the condition and with a
zero condition (1e-4), the sampler from injected noise at 32 and 4 steps
(1e-3), seeded sampling bit-identical on 1 and 2 threads, the progress
callback and its cancel, steps 0, F <= 0 and injected noise that is not
finite. Here: the _text variant loads (use_text_as_condition parsed), and
broken packages fail with errors naming the file and the key or tensor.
Environment: VEVO2_FM, TEST_WORK.
"""
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "vevo2"))
sys.path.insert(0, os.path.join(HERE, "hviske_asr"))
import fm_ref  # noqa: E402
import st_io  # noqa: E402
from checker import Checker  # noqa: E402

DRIVER = os.environ["VEVO2_FM"]
WORK = os.path.join(os.environ["TEST_WORK"], "vevo2_fm")
check = Checker()


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True)


def parity(dtype):
    fm = fm_ref.write_tiny(os.path.join(WORK, dtype.lower()), seed=7, dtype=dtype)
    gold = os.path.join(WORK, "golden_" + dtype.lower())
    fm_ref.golden(fm, gold)
    print(f"{dtype}:")
    p = run([DRIVER, fm, gold])
    sys.stderr.write(p.stderr)
    check(p.returncode == 0, f"{dtype}: test_vevo2_fm failed\n{p.stdout}")
    return fm


def broken(name, base, config=None, drop=None, reshape=None):
    """A copy of the FM folder BASE with config.json edited (a function of
    its text), a tensor dropped or one row short."""
    out = os.path.join(WORK, "bad_" + name)
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


def bad_inputs(fm):
    e = "diff_estimator."
    cases = [
        ("missing", broken("missing", fm, drop=e + "layers.1.mlp.up_proj.weight"),
         ["model.safetensors", f"missing tensor '{e}layers.1.mlp.up_proj.weight'"]),
        ("shape", broken("shape", fm, reshape=e + "layers.0.input_layernorm.to_weight.bias"),
         ["model.safetensors", f"'{e}layers.0.input_layernorm.to_weight.bias'", "shape [63]", "expected [64]"]),
        ("upsampler", broken("upsampler", fm, reshape="resampling_layers.2.weight"),
         ["model.safetensors", "'resampling_layers.2.weight'", "expected [64, 64, 4]"]),
        ("no_key", broken("no_key", fm, config=remove("num_layers")),
         ["config.json", "model.flow_matching_transformer.num_layers"]),
        ("type", broken("type", fm, config=edit("hidden_size", '"64"')),
         ["config.json", "model.flow_matching_transformer.hidden_size", "must be an integer"]),
        ("heads", broken("heads", fm, config=edit("num_heads", "5")), ["config.json", "num_heads 5", "hidden_size 64"]),
        ("scale", broken("scale", fm, config=edit("cond_scale_factor", "2")),
         ["config.json", "cond_scale_factor 2"]),
        ("codebook", broken("codebook", fm, config=edit("cond_codebook_size", "65")),
         ["model.safetensors", "'cond_emb.weight'", "expected [65, 64]"]),
        ("mels", broken("mels", fm, config=edit("num_mels", "80")),
         ["config.json", "preprocess.num_mels 80", "mel_dim 128"]),
        ("json", broken("json", fm, config=lambda t: t.replace("{", "[", 2)), ["config.json"]),
    ]
    for name, folder, needles in cases:
        p = run([DRIVER, "--load", folder])
        msg = p.stdout.strip()
        check(p.returncode == 3 and all(n in msg for n in needles), f"bad input {name}: exit {p.returncode}, {msg!r}")
        print(f"  bad {name:10s} {msg}")


def main():
    if os.path.exists(WORK):
        shutil.rmtree(WORK)
    os.makedirs(WORK)
    fm = None
    for dtype in ("F32", "F16", "BF16"):
        folder = parity(dtype)
        fm = fm or folder
    p = run([DRIVER, "--load", fm + "_text"])
    check(p.returncode == 0 and "text_condition 1" in p.stdout, f"_text variant: {p.stdout.strip()!r}")
    print(f"  _text variant: {p.stdout.strip()}")
    bad_inputs(fm)
    return check.finish()


if __name__ == "__main__":
    sys.exit(main())
