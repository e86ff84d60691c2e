"""The package layouts users hold, through `audioc transcribe` on the tiny
Hviske package (tests/ref/hviske_asr/make_tiny.py):

- a GGUF in a folder, as the ggml runtime documents it (DIR/model.gguf, or
  the only *.gguf of DIR under its release name): the output of the file
  itself; two *.gguf without a model.gguf refused, naming both;
- GGUF files written by our own generator (tests/ref/gguf_np.py, the
  runtime's layout with the package's files embedded) from the folder's
  tensors: F32 and F16 give the tokens of the F32 and F16 folders exactly;
  Q8_0, Q6_K and Q4_K (the Linear weights whose rows are whole blocks;
  the tiny model's K-quant ones are the feed-forward outputs, rows of 256)
  give the tokens of a folder holding the values they store, and Q8_0 and
  Q6_K the F32 folder's tokens too (Q4_K changes them on this chaotic tiny
  decoder);
- malformed files, each a clear error naming the file and the tensor or
  key: a Q4_K block cut short, a NaN and an infinite scale, Q3_K, an
  embedded file cut (offsets past the data) or named twice;
- a package of the Cohere base model's languages transcribes in each, and
  refuses another naming those it has.
About 8 s."""
import json
import os
import shutil
import struct
import subprocess
import sys

import numpy as np
import pytest

import packages
import testenv
from common import audioc, clean_failure

sys.path.insert(0, os.path.join(testenv.ROOT, "tests", "ref"))
sys.path.insert(0, os.path.join(testenv.ROOT, "tests", "ref", "hviske_asr"))
import gguf_np  # noqa: E402
import st_io  # noqa: E402

WORK = testenv.work("packages_cli")
FILES = ("config.json", "generation_config.json", "tokenizer.model")


@pytest.fixture(scope="module")
def clip():
    raw, clip = os.path.join(WORK, "raw.wav"), os.path.join(WORK, "clip.wav")
    subprocess.run(["espeak-ng", "-v", "da", "-w", raw, "Hej med dig, hvordan går det i dag?"], check=True)
    subprocess.run(["sox", "-D", raw, "-r", "16000", "-b", "16", clip], check=True)
    return clip


def tokens(model, clip):
    rc, out, err = audioc("transcribe", "-m", model, "--tokens", clip)
    assert rc == 0 and out.strip(), f"{model}: exit {rc}: {err.strip()[:300]}"
    return out


@pytest.fixture(scope="module")
def folder(tokenizer):
    return packages.hviske(0)


def package_files(pkg):
    return [(n, open(os.path.join(pkg, n), "rb").read()) for n in FILES if os.path.exists(os.path.join(pkg, n))]


def tensors_of(pkg):
    t = st_io.load(os.path.join(pkg, "model.safetensors"))
    return list(t.items())


def gguf(pkg, name, kind, **kw):
    return gguf_np.write(os.path.join(WORK, name), tensors_of(pkg), package_files(pkg), kind, **kw)


def test_gguf_in_folder(folder, clip):
    """DIR/model.gguf and DIR/<release name>.gguf load as the file itself; two are refused."""
    src = packages.hviske_gguf("q8_0")
    want = tokens(src, clip)
    for sub, name in (("named", "model.gguf"), ("hviske-v5.3-Q8_0", "hviske-v5.3-q8_0.gguf")):
        d = os.path.join(WORK, sub)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        shutil.copy(src, os.path.join(d, name))
        assert tokens(d, clip) == want, f"{sub}/{name} gives other tokens than the file"
    d = os.path.join(WORK, "two")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    for name in ("a-q8_0.gguf", "b-f16.gguf"):
        shutil.copy(src, os.path.join(d, name))
    rc, _, err = audioc("transcribe", "-m", d, clip)
    clean_failure("two .gguf files", rc, err, "2 .gguf files")
    assert "a-q8_0.gguf" in err and "b-f16.gguf" in err, err
    os.makedirs(os.path.join(WORK, "empty"), exist_ok=True)
    rc, _, err = audioc("transcribe", "-m", os.path.join(WORK, "empty"), clip)
    clean_failure("empty folder", rc, err, "no .gguf file")


@pytest.mark.parametrize("kind,src", [("F32", ""), ("F16", "_f16")])
def test_float_gguf(kind, src, folder, clip):
    """F32 and F16 GGUF files of a folder's values give its tokens exactly."""
    pkg = folder + src
    g = gguf(pkg, f"tiny_{kind}.gguf", kind)
    assert tokens(g, clip) == tokens(pkg, clip), f"{kind} GGUF differs from its folder"


def values_folder(pkg, kind):
    """A copy of the folder PKG whose F32 tensors hold what the GGUF of KIND stores (quantized
    and back, by the numpy oracle): the same model, read through the plain f32 path."""
    out = os.path.join(WORK, f"values_{kind}")
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(pkg, out)
    t = {}
    for name, a in tensors_of(pkg):
        k = gguf_np.pick(name, np.shape(a), kind) if a.dtype.kind == "f" else None
        if k in gguf_np.BLOCK:
            a = gguf_np.kq.dequantize(k.lower(), gguf_np.encode(a, k)).reshape(a.shape)
        elif k == "F16":
            a = a.astype(np.float16).astype(np.float32)
        t[name] = a
    st_io.save(os.path.join(out, "model.safetensors"), t)
    return out


# measured on the tiny model: Q8_0 and Q6_K keep the F32 folder's tokens; Q4_K does not
# (its 4-bit feed-forward outputs move a decoder that is chaotic by design), so each is
# held to the folder of its own values, and Q8_0, Q6_K to the F32 folder too
@pytest.mark.parametrize("kind,same_as_f32", [("Q8_0", True), ("Q6_K", True), ("Q4_K", False)])
def test_quantized_gguf(kind, same_as_f32, folder, clip):
    """Quantized GGUF files give the tokens of a folder of the values they store."""
    g = gguf(folder, f"tiny_{kind}.gguf", kind)
    n = sum(gguf_np.pick(name, np.shape(a), kind) == kind for name, a in tensors_of(folder))
    assert n > 0, f"no tensor of the tiny model takes {kind}"
    got = tokens(g, clip)
    assert got == tokens(values_folder(folder, kind), clip), f"{kind} GGUF ({n} tensors) differs from its values"
    if same_as_f32:
        assert got == tokens(folder, clip), f"{kind} GGUF ({n} tensors of {kind}) changes the F32 folder's tokens"


def last_quantized(pkg, kind):
    """The tensors in an order that puts one of KIND last, and its name."""
    t = tensors_of(pkg)
    i = max(i for i, (n, a) in enumerate(t) if gguf_np.pick(n, np.shape(a), kind) == kind)
    return t[:i] + t[i + 1:] + [t[i]], t[i][0]


def bad_scale(value):
    def make(pkg, path):
        t, name = last_quantized(pkg, "Q4_K")
        x = np.asarray(dict(t)[name], np.float32).reshape(-1)
        blocks = bytearray(gguf_np.encode(x, "Q4_K"))
        blocks[144 * 3:144 * 3 + 2] = struct.pack("<e", value)  # block 3's d
        gguf_np.write(path, t, package_files(pkg), "Q4_K", raw={name: bytes(blocks)})
        return name, "block 3 has a scale that is NaN or infinite"
    return make


def cut_block(pkg, path):
    t, name = last_quantized(pkg, "Q4_K")
    gguf_np.write(path, t, package_files(pkg), "Q4_K")
    size = os.path.getsize(path)
    with open(path, "r+b") as f:
        f.truncate(size - (-144 * 8 % 32) - 100)  # into the last block
    return name, "run past the end"


def q3_k(pkg, path):
    t, name = last_quantized(pkg, "Q4_K")
    x = np.asarray(dict(t)[name], np.float32).reshape(-1)
    gguf_np.write(path, t, package_files(pkg), "Q4_K", types={name: "Q3_K"},
                  raw={name: b"\0" * (x.size // 256 * 110)})
    return name, "Q3_K) is not supported; convert the package with --type q4_k, q6_k or q8_0"


def embedded_cut(pkg, path):
    gguf_np.write(path, tensors_of(pkg), package_files(pkg), "F16")
    blob = bytearray(open(path, "rb").read())
    key = gguf_np.gstr("audiocpp.embedded_files.offsets") + struct.pack("<IIQ", gguf_np.ARRAY, gguf_np.U64, 4)
    at = blob.index(key) + len(key) + 8 * 3  # the end of the last file
    blob[at:at + 8] = struct.pack("<Q", 10 ** 9)
    open(path, "wb").write(blob)
    return "tokenizer.model", "are not inside"


def embedded_twice(pkg, path):
    files = package_files(pkg)
    gguf_np.write(path, tensors_of(pkg), files + [files[0]], "F16")
    return "config.json", "appears twice"


BAD = [("NaN scale", bad_scale(float("nan"))), ("infinite scale", bad_scale(float("inf"))),
       ("K-quant block cut short", cut_block), ("Q3_K", q3_k), ("embedded file cut", embedded_cut),
       ("embedded file twice", embedded_twice)]


@pytest.mark.parametrize("what,make", BAD, ids=[b[0] for b in BAD])
def test_malformed(what, make, folder, clip):
    """Each malformed file is refused, naming the file and the tensor or key."""
    path = os.path.join(WORK, "bad_" + what.replace(" ", "_") + ".gguf")
    name, needle = make(folder, path)
    rc, _, err = audioc("transcribe", "-m", path, clip)
    clean_failure(what, rc, err, needle)
    assert os.path.basename(path) in err and name in err, f"{what}: the message names not the file and '{name}': {err}"


def test_multilingual(folder, clip):
    """A Cohere Transcribe package of other languages (the supported_languages of the base
    package's config.json in the data folder) transcribes in each; a language it lacks is
    refused, listing those it has."""
    base_config = os.path.join(testenv.DATA, "cohere_asr_base", "config.json")
    testenv.require(base_config)
    base = json.load(open(base_config))["supported_languages"]
    d = os.path.join(WORK, "multilingual")
    shutil.rmtree(d, ignore_errors=True)
    shutil.copytree(folder, d)
    cfg = json.load(open(os.path.join(d, "config.json")))
    cfg["supported_languages"] = base
    json.dump(cfg, open(os.path.join(d, "config.json"), "w"))
    for lang in base:
        rc, out, err = audioc("transcribe", "-m", d, "-l", lang, "--tokens", clip)
        assert rc == 0 and out.strip(), f"-l {lang}: exit {rc}: {err.strip()[:300]}"
    rc, _, err = audioc("transcribe", "-m", d, "-l", "da", clip)
    assert rc == 2 and f"language 'da' is not supported by this model ({', '.join(base)})" in err, err
