"""Hviske v6 from the ggml runtime's single-file GGUF, written by our own
generator (tests/ref/gguf_np.py) from the tiny packages' tensors in the
runtime's layout: the tensors under the namespace "weights/", the
package's config.json, tokenizer.json and tokenizer_config.json embedded,
the package description naming the family hviske_asr_v6.

- F32 and BF16 files give the token ids of the F32 and BF16 folders of the
  same values exactly; the BF16 file held as f32 gives the F32 folder's;
- a Q8_0 file (the runtime's rule: Linear weights Q8_0, the embedding F16,
  the rest BF16) held as f32 gives the ids of a folder holding the values
  it stores; run as stored, its ids are held at the measured agreement
  with the F32 folder;
- the file in a folder (DIR/model.gguf) loads as the file itself; a GGUF
  without the description is told from v5.3's by its tensors;
- malformed files (no "weights/" namespace, no embedded config.json or
  tokenizer.json) are clear errors naming the file and what is missing.
About 25 s."""
import json
import os
import shutil
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

LIBRI = os.path.join(testenv.DATA, "asr_validation", "librispeech")
CLIPS = ["librispeech_test_other_7902-96591-0000.wav", "librispeech_test_clean_6930-75918-0001.wav"]
FILES = ("config.json", "tokenizer.json", "tokenizer_config.json")
NS = "weights/"
# the runtime's package description, reduced to what names the tensor source
SPEC = ("hviske_asr_v6", json.dumps({"family": "hviske_asr_v6", "sources": [
    {"format": "gguf", "tensors": {"weights": {"source": "weights:", "prefix": "weights"}}}]}))
# of the 2 clips, how many Q8_0 run as stored (int8 products) decodes with the F32 folder's ids (measured: 2)
Q8_SAME_AS_F32 = 2


@pytest.fixture(scope="module")
def work():
    testenv.require(*(os.path.join(LIBRI, c) for c in CLIPS))
    return testenv.work("hviske_v6_gguf")


def ids(model, *args):
    """The token ids of each clip (2 beams, the default; no VAD)."""
    rc, out, err = audioc("transcribe", "-m", model, "--no-vad", "-f", "json", "--tokens", *args,
                          *(os.path.join(LIBRI, c) for c in CLIPS))
    assert rc == 0, f"{model}: exit {rc}: {err.strip()[-300:]}"
    return [[s["tokens"] for s in json.loads(line)["segments"]] for line in out.splitlines()]


def tensors_of(pkg):
    return list(st_io.load(os.path.join(pkg, "model.safetensors")).items())


def files_of(pkg, drop=()):
    return [(n, open(os.path.join(pkg, n), "rb").read()) for n in FILES if n not in drop]


def q8_types(tensors):
    """The runtime's Q8_0 rule: what gguf_np.pick gives Q8_0 or F16 (the embedding), the rest BF16."""
    return {n: "BF16" for n, a in tensors if gguf_np.pick(n, np.shape(a), "Q8_0") == "F32"}


def gguf(work, pkg, name, kind, ns=NS, drop=(), spec=SPEC):
    t = [(ns + n, a) for n, a in tensors_of(pkg)]
    types = q8_types(t) if kind == "Q8_0" else None
    return gguf_np.write(os.path.join(work, name), t, files_of(pkg, drop), kind, sources=(("weights", "model.safetensors"),),
                         spec=spec, types=types)


def test_float_gguf(work):
    """F32 and BF16 GGUF files give their folders' ids; BF16 held as f32 gives the F32 folder's."""
    f32, bf16 = packages.hviske_v6("f32"), packages.hviske_v6("bf16")
    g32, g16 = gguf(work, f32, "v6_f32.gguf", "F32"), gguf(work, bf16, "v6_bf16.gguf", "BF16")
    want32 = ids(f32)
    assert ids(g32) == want32, "F32 GGUF differs from the F32 folder"
    assert ids(g16) == ids(bf16), "BF16 GGUF differs from the BF16 folder"
    assert ids(g16, "--weights", "f32") == want32, "BF16 GGUF held as f32 differs from the F32 folder"


def values_folder(work, pkg):
    """A copy of PKG whose F32 tensors hold what the Q8_0 GGUF stores (quantized and back by the numpy oracle)."""
    out = os.path.join(work, "values_q8_0")
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(pkg, out)
    t = {}
    for name, a in tensors_of(pkg):
        k = gguf_np.pick(name, np.shape(a), "Q8_0")
        if k == "Q8_0":
            a = gguf_np.kq.dequantize("q8_0", gguf_np.encode(a, k)).reshape(a.shape)
        elif k == "F16":
            a = a.astype(np.float16).astype(np.float32)
        t[name] = a
    st_io.save(os.path.join(out, "model.safetensors"), t)
    return out


def test_q8_0_gguf(work):
    """Q8_0 held as f32 gives the ids of its values' folder; as stored, the F32 folder's on the measured clips."""
    f32 = packages.hviske_v6("f32")
    g = gguf(work, f32, "v6_q8_0.gguf", "Q8_0")
    n = sum(gguf_np.pick(name, np.shape(a), "Q8_0") == "Q8_0" for name, a in tensors_of(f32))
    assert n > 0, "no tensor of the tiny model takes Q8_0"
    assert ids(g, "--weights", "f32") == ids(values_folder(work, f32)), "Q8_0 GGUF held as f32 differs from its values"
    got, want = ids(g), ids(f32)
    same = sum(a == b for a, b in zip(got, want))
    print(f"Q8_0 GGUF as stored: {same}/{len(want)} clips with the F32 folder's ids")
    assert same >= Q8_SAME_AS_F32, f"Q8_0 GGUF: {same} clips with the F32 folder's ids, held at {Q8_SAME_AS_F32}"


def test_gguf_in_folder_and_probe(work):
    """DIR/model.gguf loads as the file; without the description the tensors tell v6 from v5.3."""
    bf16 = packages.hviske_v6("bf16")
    g = gguf(work, bf16, "v6_bf16_dir.gguf", "BF16")
    d = os.path.join(work, "in_folder")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    shutil.copy(g, os.path.join(d, "model.gguf"))
    want = ids(g)
    assert ids(d) == want, "DIR/model.gguf differs from the file"
    bare = gguf(work, bf16, "v6_bare.gguf", "BF16", spec=None)
    assert ids(bare) == want, "a GGUF without the package description differs"


@pytest.mark.parametrize("name, kw, needle", [
    ("no_namespace", {"ns": ""}, "no tensor 'weights/proj.weight'"),
    ("no_config", {"drop": ("config.json",)}, "no embedded file 'config.json'"),
    ("no_tokenizer", {"drop": ("tokenizer.json",)}, "no embedded file 'tokenizer.json'"),
])
def test_bad_gguf(work, name, kw, needle):
    g = gguf(work, packages.hviske_v6("bf16"), f"bad_{name}.gguf", "BF16", **kw)
    rc, _, err = audioc("transcribe", "-m", g, "--no-vad", os.path.join(LIBRI, CLIPS[0]))
    clean_failure(name, rc, err, needle)
    assert os.path.basename(g) in err, f"{name}: the message names the file: {err.strip()[:300]}"
