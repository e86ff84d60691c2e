"""Tiny random model packages, each made once under the work dir and kept
for later runs and other test files until the script that makes it changes
(a lock file lets two test files ask for the same package at once)."""
import fcntl
import hashlib
import os
import shutil
import subprocess

import testenv

REF = os.path.join(testenv.ROOT, "tests", "ref")
MAKE_TINY = os.path.join(REF, "hviske_asr", "make_tiny.py")
MAKE_VEVO2 = os.path.join(REF, "vevo2", "make_package.py")
MAKE_HVISKE_GGUF = os.path.join(REF, "hviske_asr", "make_gguf.py")


def _key(cmd, sources):
    h = hashlib.sha256(repr(cmd).encode())
    for path in sources:
        with open(path, "rb") as f:
            h.update(f.read())
    return h.hexdigest()


def made_once(name, cmd, sources):
    """WORK/packages/NAME/pkg, written by CMD (with {out} in it) unless a run
    of the same CMD, SOURCES and Python files beside CMD's scripts finished it before."""
    folder = os.path.join(testenv.WORK, "packages", name)
    out = os.path.join(folder, "pkg")
    os.makedirs(os.path.dirname(folder), exist_ok=True)
    scripts = [c for c in cmd if c.endswith(".py")]
    key = _key(cmd, [*sources, *(os.path.join(os.path.dirname(s), f) for s in scripts
                                 for f in sorted(os.listdir(os.path.dirname(s))) if f.endswith(".py"))])
    stamp = folder + ".done"
    with open(folder + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if os.path.exists(stamp) and open(stamp).read() == key:
            return out
        if os.path.exists(folder):
            shutil.rmtree(folder)
        os.makedirs(folder)
        p = subprocess.run([c.format(out=out) for c in cmd], capture_output=True, text=True)
        if p.returncode != 0:
            raise RuntimeError(f"making {name}: exit {p.returncode}\n{p.stderr[-2000:]}")
        with open(stamp, "w") as f:
            f.write(key)
    return out


def hviske(seed=0, frontend=True):
    """The tiny Hviske package of make_tiny.py with the real tokenizer: F32 at
    the returned path, F16 and BF16 copies at PATH_f16 and PATH_bf16."""
    extra = [] if frontend else ["--no-frontend-tensors"]
    name = f"hviske_tiny_s{seed}" + ("" if frontend else "_nofe")
    return made_once(name, [testenv.PY, MAKE_TINY, "{out}", "--tokenizer", testenv.TOKENIZER,
                            "--seed", str(seed), "--dtypes", "f32,f16,bf16", *extra], [testenv.TOKENIZER])


def hviske_gguf(kind):
    """The seed-0 tiny Hviske package as one GGUF file of the ggml runtime's layout and KIND
    rule (tests/ref/hviske_asr/make_gguf.py)."""
    src = hviske(0)
    out = made_once(f"hviske_tiny_s0_{kind}_gguf", [testenv.PY, MAKE_HVISKE_GGUF, src, "{out}", "--type", kind],
                    [os.path.join(src, "model.safetensors")])
    return out


def vevo2(dtype="F32", seed=0):
    """A whole random Vevo2 package in the published layout (make_package.py)."""
    return made_once(f"vevo2_{dtype.lower()}_s{seed}",
                     [testenv.PY, MAKE_VEVO2, "{out}", "--dtype", dtype, "--seed", str(seed)], [])


MAKE_V6 = os.path.join(REF, "hviske_v6", "make_tiny.py")


def hviske_v6(dtype="bf16", seed=0, lm_head=False, pos_table=False):
    """A tiny Hviske v6 package (tests/ref/hviske_v6/make_tiny.py) with the real Qwen2.5 vocabulary."""
    extra = (["--lm-head"] if lm_head else []) + (["--pos-table"] if pos_table else [])
    name = f"hviske_v6_{dtype}_s{seed}" + ("_head" if lm_head else "") + ("_pos" if pos_table else "")
    qwen = os.path.join(testenv.DATA, "qwen2.5_tokenizer")
    return made_once(name, [testenv.PY, MAKE_V6, "{out}", "--seed", str(seed), "--dtype", dtype, *extra],
                     [os.path.join(qwen, f) for f in ("vocab.json", "merges.txt", "tokenizer_config.json")])
