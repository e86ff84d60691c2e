#!/usr/bin/python3
"""Parity of the Qwen2 decoder (src/models/qwen2) with the PyTorch
reference tests/ref/qwen2/qwen2_ref.py, on tiny random checkpoints in the
Hugging Face layout (tests/ref/qwen2/make_checkpoints.py: tied F32 and BF16,
untied F16, untied with head_dim from config.json).

test_qwen2_stages checks, per checkpoint: logits at every position under
teacher forcing (relative 1e-4), cached steps against the full
recomputation (1e-5), greedy ids, ids sampled with the reference's
uniforms, seeded sampling on 1 and 2 threads, a stop id, the position
limit and the cache. Here: the sampler's distribution at every sampled
step within 1e-6 of sampler_ref's HF processors run on the same logits,
the generation defaults read from generation_config.json, and the load
errors of broken folders (each naming the file and the key or tensor).
Environment: QWEN2_STAGES, TEST_WORK.
"""
import json
import os
import shutil
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "qwen2"))
sys.path.insert(0, os.path.join(HERE, "hviske_asr"))
import make_checkpoints  # noqa: E402
import qwen2_ref  # noqa: E402
import sampler_ref  # noqa: E402
import st_io  # noqa: E402
from checker import Checker  # noqa: E402

STAGES = os.environ["QWEN2_STAGES"]
WORK = os.path.join(os.environ["TEST_WORK"], "qwen2_parity")
PY = "/usr/bin/python3"
check = Checker()


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True)


def processors(model_dir, gold):
    """The C sampler's distributions against the HF processors on the C logits."""
    with open(os.path.join(model_dir, "config.json")) as f:
        V = json.load(f)["vocab_size"]
    g = make_checkpoints.GENERATION
    with open(os.path.join(gold, "seq.txt")) as f:
        P = int(f.readline())
        prompt = [int(x) for x in f.readline().split()][:P]
    with open(os.path.join(gold, "c_sampled.txt")) as f:
        ids = [int(x) for x in f.readline().split()]
    steps = np.fromfile(os.path.join(gold, "c_steps.bin"), dtype="<f4").reshape(len(ids), 2, V)
    f32 = lambda x: float(np.float32(x))  # noqa: E731
    case = {"penalty": f32(g["repetition_penalty"]), "min_new": qwen2_ref.MIN_NEW, "eos": -1,
            "temperature": f32(g["temperature"]), "top_k": g["top_k"], "top_p": f32(g["top_p"])}
    worst, support = 0.0, True
    for step in range(len(ids)):
        logits, probs = steps[step, 0], steps[step, 1]
        want, _ = sampler_ref.hf_probs(logits, prompt + ids[:step], dict(case, step=step))
        worst = max(worst, float(np.max(np.abs(probs.astype(np.float64) - want))))
        support &= bool(np.all((probs > 0) == (want > 0)))
    check(worst <= 1e-6 and support, f"{model_dir}: sampling distribution differs by {worst:.3g}, support {support}")
    print(f"  processors           {len(ids)} steps, max difference {worst:.2e} (tolerance 1e-6), same support {support}")


def parity(name, model_dir):
    gold = os.path.join(WORK, "golden_" + name)
    p = run([PY, os.path.join(HERE, "qwen2", "qwen2_ref.py"), model_dir, gold])
    if not check(p.returncode == 0, f"{name}: reference failed\n{p.stderr[-2000:]}"):
        return
    print(f"{name}:")
    p = run([STAGES, model_dir, gold])
    sys.stderr.write(p.stderr)
    check(p.returncode == 0, f"{name}: test_qwen2_stages failed")
    processors(model_dir, gold)
    p = run([STAGES, "--load", model_dir])
    g = make_checkpoints.GENERATION
    want = (f"defaults: do_sample 1 top_k {g['top_k']} top_p {g['top_p']:g} temperature {g['temperature']:g} "
            f"repetition_penalty {g['repetition_penalty']:g} pad {g['pad_token_id']} eos "
            + " ".join(map(str, g["eos_token_id"])))
    check(p.stdout.strip() == want, f"{name}: {p.stdout.strip()!r}, expected {want!r}")


def broken(name, base, config=None, drop=None, reshape=None, generation=None):
    """A copy of BASE with config.json keys changed, a tensor dropped or re-shaped."""
    out = os.path.join(WORK, "bad_" + name)
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


def bad_inputs(f32, untied):
    cases = [
        ("heads", broken("heads", f32, {"num_attention_heads": 5}), ["config.json", "num_attention_heads 5", "hidden_size 64"]),
        ("kv_heads", broken("kv_heads", f32, {"num_key_value_heads": 3}), ["config.json", "num_key_value_heads 3"]),
        ("no_width", broken("no_width", f32, {"hidden_size": None}), ["config.json", "'hidden_size'"]),
        ("vocab", broken("vocab", f32, {"vocab_size": 301}), ["model.safetensors", "model.embed_tokens.weight", "vocab_size 301"]),
        ("missing", broken("missing", f32, drop="model.layers.1.mlp.up_proj.weight"),
         ["model.safetensors", "missing tensor 'model.layers.1.mlp.up_proj.weight'"]),
        ("shape", broken("shape", f32, reshape="model.layers.0.self_attn.k_proj.bias"),
         ["model.safetensors", "'model.layers.0.self_attn.k_proj.bias'", "shape [31]", "expected [32]"]),
        ("no_head", broken("no_head", untied, drop="lm_head.weight"), ["model.safetensors", "'lm_head.weight'"]),
        ("head_vocab", broken("head_vocab", untied, reshape="lm_head.weight"),
         ["model.safetensors", "'lm_head.weight'", "vocab_size 300"]),
        ("eos", broken("eos", f32, generation={"eos_token_id": [297, 300]}), ["generation_config.json", "eos_token_id"]),
        ("top_p", broken("top_p", f32, generation={"top_p": 1.5}), ["generation_config.json", "top-p"]),
    ]
    for name, folder, needles in cases:
        p = run([STAGES, "--load", folder])
        msg = p.stdout.strip()
        check(p.returncode == 3 and all(n in msg for n in needles), f"bad input {name}: exit {p.returncode}, {msg!r}")
        print(f"  bad {name:11s} {msg}")


def main():
    os.makedirs(WORK, exist_ok=True)
    tiny = os.path.join(WORK, "tiny")
    p = run([PY, os.path.join(HERE, "qwen2", "make_checkpoints.py"), tiny])
    if not check(p.returncode == 0, f"make_checkpoints failed\n{p.stderr[-2000:]}"):
        return 1
    for name in ("f32", "bf16", "f16_untied", "f32_headdim"):
        parity(name, os.path.join(tiny, name))
    # a folder without generation_config.json: HF's defaults, config.json's eos
    nogen = broken("nogen", os.path.join(tiny, "f32"))
    os.remove(os.path.join(nogen, "generation_config.json"))
    p = run([STAGES, "--load", nogen])
    want = "defaults: do_sample 0 top_k 50 top_p 1 temperature 1 repetition_penalty 1 pad -1 eos 297"
    check(p.stdout.strip() == want, f"no generation_config.json: {p.stdout.strip()!r}, expected {want!r}")
    bad_inputs(os.path.join(tiny, "f32"), os.path.join(tiny, "f16_untied"))
    return check.finish()


if __name__ == "__main__":
    sys.exit(main())
