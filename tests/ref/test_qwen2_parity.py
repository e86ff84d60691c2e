"""Parity of the Qwen2 decoder (src/models/qwen2) with the PyTorch
reference tests/ref/qwen2/qwen2_ref.py, on tiny random checkpoints in the
Hugging Face layout (tests/ref/qwen2/make_checkpoints.py: tied F32 and BF16,
untied F16, untied with head_dim from config.json).

The driver test_qwen2_stages checks, per checkpoint: logits at every
position under teacher forcing (relative 1e-4), cached steps against the
full recomputation (1e-5), greedy ids, ids sampled with the reference's
uniforms, seeded sampling on 1 and 2 threads, a stop id, the position limit
and the cache. Here also: the sampler's distribution at every sampled step
within 1e-6 of sampler_ref's HF processors run on the same logits, the
generation defaults read from generation_config.json, and the load errors
of broken folders (each naming the file and the key or tensor).
"""
import functools
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import testenv

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "qwen2"))
sys.path.insert(0, os.path.join(HERE, "hviske_asr"))
import make_checkpoints  # noqa: E402
import qwen2_ref  # noqa: E402
import sampler_ref  # noqa: E402
import st_io  # noqa: E402

CHECKPOINTS = ["f32", "bf16", "f16_untied", "f32_headdim"]
G = make_checkpoints.GENERATION


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True)


@pytest.fixture(scope="module")
def work():
    return testenv.work("qwen2_parity")


@pytest.fixture(scope="module")
def stages(driver):
    return driver("test_qwen2_stages")


@pytest.fixture(scope="module")
def tiny(work):
    """The folder of the tiny checkpoints make_checkpoints.py writes."""
    out = os.path.join(work, "tiny")
    p = run([testenv.PY, os.path.join(HERE, "qwen2", "make_checkpoints.py"), out])
    assert p.returncode == 0, f"make_checkpoints failed\n{p.stderr[-2000:]}"
    return out


@pytest.fixture(scope="module")
def stage_run(tiny, work, stages):
    """The reference's goldens of a checkpoint and the driver's run on them, once each."""
    @functools.cache
    def get(name):
        gold = os.path.join(work, "golden_" + name)
        p = run([testenv.PY, os.path.join(HERE, "qwen2", "qwen2_ref.py"), os.path.join(tiny, name), gold])
        assert p.returncode == 0, f"{name}: reference failed\n{p.stderr[-2000:]}"
        p = run([stages, os.path.join(tiny, name), gold])
        sys.stderr.write(p.stderr)
        return gold, p
    return get


@pytest.mark.parametrize("name", CHECKPOINTS)
def test_stages(name, stage_run):
    """The driver's logits, cache, ids and sampling agree with the reference on checkpoint NAME."""
    assert stage_run(name)[1].returncode == 0, f"{name}: test_qwen2_stages failed"


@pytest.mark.parametrize("name", CHECKPOINTS)
def test_sampler_distribution(name, tiny, stage_run):
    """The C sampler's distribution at every sampled step is within 1e-6 of
    the HF processors run on the C logits, with the same support."""
    gold = stage_run(name)[0]
    model_dir = os.path.join(tiny, name)
    with open(os.path.join(model_dir, "config.json")) as f:
        V = json.load(f)["vocab_size"]
    with open(os.path.join(gold, "seq.txt")) as f:
        P = int(f.readline())
        prompt = [int(x) for x in f.readline().split()][:P]
    with open(os.path.join(gold, "c_sampled.txt")) as f:
        ids = [int(x) for x in f.readline().split()]
    steps = np.fromfile(os.path.join(gold, "c_steps.bin"), dtype="<f4").reshape(len(ids), 2, V)
    f32 = lambda x: float(np.float32(x))  # noqa: E731
    case = {"penalty": f32(G["repetition_penalty"]), "min_new": qwen2_ref.MIN_NEW, "eos": -1,
            "temperature": f32(G["temperature"]), "top_k": G["top_k"], "top_p": f32(G["top_p"])}
    worst, support = 0.0, True
    for step in range(len(ids)):
        logits, probs = steps[step, 0], steps[step, 1]
        want, _ = sampler_ref.hf_probs(logits, prompt + ids[:step], dict(case, step=step))
        worst = max(worst, float(np.max(np.abs(probs.astype(np.float64) - want))))
        support &= bool(np.all((probs > 0) == (want > 0)))
    assert worst <= 1e-6 and support, f"{model_dir}: sampling distribution differs by {worst:.3g}, support {support}"


@pytest.mark.parametrize("name", CHECKPOINTS)
def test_generation_defaults(name, tiny, stages):
    """The generation defaults are those of generation_config.json."""
    p = run([stages, "--load", os.path.join(tiny, name)])
    want = (f"defaults: do_sample 1 top_k {G['top_k']} top_p {G['top_p']:g} temperature {G['temperature']:g} "
            f"repetition_penalty {G['repetition_penalty']:g} pad {G['pad_token_id']} eos "
            + " ".join(map(str, G["eos_token_id"])))
    assert p.stdout.strip() == want, f"{name}: {p.stdout.strip()!r}, expected {want!r}"


def broken(work, name, base, config=None, drop=None, reshape=None, generation=None):
    """A copy of BASE with config.json keys changed, a tensor dropped or re-shaped."""
    out = os.path.join(work, "bad_" + name)
    if os.path.exists(out):
        shutil.rmtree(out)
    shutil.copytree(base, out)
    if config is not None:
        with open(os.path.join(base, "config.json")) as f:
            cfg = json.load(f)
        cfg.update(config)
        with open(os.path.join(out, "config.json"), "w") as f:
            json.dump({k: v for k, v in cfg.items() if v is not None}, f)
    if generation is not None:
        with open(os.path.join(out, "generation_config.json"), "w") as f:
            json.dump(generation, f)
    if drop or reshape:
        st_io.edit(os.path.join(base, "model.safetensors"), os.path.join(out, "model.safetensors"), drop, reshape)
    return out


def test_no_generation_config(tiny, work, stages):
    """Without generation_config.json: HF's defaults and config.json's eos."""
    nogen = broken(work, "nogen", os.path.join(tiny, "f32"))
    os.remove(os.path.join(nogen, "generation_config.json"))
    p = run([stages, "--load", nogen])
    want = "defaults: do_sample 0 top_k 50 top_p 1 temperature 1 repetition_penalty 1 pad -1 eos 297"
    assert p.stdout.strip() == want, f"no generation_config.json: {p.stdout.strip()!r}, expected {want!r}"


BAD = [  # name, base checkpoint, change, what the error names
    ("heads", "f32", dict(config={"num_attention_heads": 5}), ["config.json", "num_attention_heads 5", "hidden_size 64"]),
    ("kv_heads", "f32", dict(config={"num_key_value_heads": 3}), ["config.json", "num_key_value_heads 3"]),
    ("no_width", "f32", dict(config={"hidden_size": None}), ["config.json", "'hidden_size'"]),
    ("vocab", "f32", dict(config={"vocab_size": 301}), ["model.safetensors", "model.embed_tokens.weight", "vocab_size 301"]),
    ("missing", "f32", dict(drop="model.layers.1.mlp.up_proj.weight"),
     ["model.safetensors", "missing tensor 'model.layers.1.mlp.up_proj.weight'"]),
    ("shape", "f32", dict(reshape="model.layers.0.self_attn.k_proj.bias"),
     ["model.safetensors", "'model.layers.0.self_attn.k_proj.bias'", "shape [31]", "expected [32]"]),
    ("no_head", "f16_untied", dict(drop="lm_head.weight"), ["model.safetensors", "'lm_head.weight'"]),
    ("head_vocab", "f16_untied", dict(reshape="lm_head.weight"), ["model.safetensors", "'lm_head.weight'", "vocab_size 300"]),
    ("eos", "f32", dict(generation={"eos_token_id": [297, 300]}), ["generation_config.json", "eos_token_id"]),
    ("top_p", "f32", dict(generation={"top_p": 1.5}), ["generation_config.json", "top-p"]),
]


@pytest.mark.parametrize("name,base,change,needles", BAD, ids=[b[0] for b in BAD])
def test_bad_folder(name, base, change, needles, tiny, work, stages):
    """A broken folder fails to load (exit 3) with an error naming the file and the key or tensor."""
    p = run([stages, "--load", broken(work, name, os.path.join(tiny, base), **change)])
    msg = p.stdout.strip()
    assert p.returncode == 3 and all(n in msg for n in needles), f"bad input {name}: exit {p.returncode}, {msg!r}"
