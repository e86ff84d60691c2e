"""`audioc quantize IN OUT --type T` (src/api/quantize.c, src/io/gguf_write.c):
every family's package as one GGUF file, read back here by an independent
reader (tests/ref/gguf_np.py) and run against `--weights T` on its input.

- Hviske (the tiny package, F32): the f16, bf16 and q8_0 files give the
  tokens `--weights T` gives on the folder (the same rule, the same bytes;
  its pointwise convolutions read 144 values, no Q8_0 under either);
  q6_k gives the F32 folder's tokens, q4_k loads and transcribes. The file
  holds the safetensors' names and shapes in their order, the folder's
  files embedded byte for byte, and each tensor as stored or in the type
  asked: F16/BF16 rounded to nearest even, Q8_0/Q4_K/Q6_K blocks
  byte-identical to the numpy oracle (tests/ref/kquant_ref.py) of the
  stored values; the token embedding and the subsampling stem as stored.
- Hviske v6 (the tiny BF16 package): the runtime's layout, its tensors
  under "weights/" and the description naming that source; f16, bf16 and
  q8_0 files give the tokens `--weights T` gives on the folder.
- Silero and MarbleNet (the real weights): their rule keeps every tensor
  f32, so the file gives the same probabilities; MarbleNet's config is
  embedded (from the weights file and from the folder) and read from it.
- Vevo2 (the tiny package, Whisper inside): the f16 and bf16 files give
  the conversion driver's ids and audio of `--weights` on the folder bit
  for bit, the q8_0 file with `--weights q8_0` (its Coco downsampling
  convolutions, [H, H, 3], stay F32: GGUF rows are the last dimension),
  and the embedded AR tokenizer its ids; the runtime's layout: the seven parts' namespaces, the
  description's files embedded, its tensors map, every tensor as stored
  or in the type asked; q6_k and q4_k audio SNR against the F32 folder
  above a floor; a GGUF of the runtime's layout whose namespaces and paths
  are all renamed, quantized, holds the folder's tensors bit for bit.
- Refused, naming the problem, with nothing left in the output folder: an
  unknown type, no --type, a missing input, an output folder that does not
  exist, an output that is a folder, a package already in Q8_0.
About 10 s."""
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import testenv
from common import MARBLE_DIR, SILERO, CLIP, audioc

sys.path.insert(0, os.path.join(testenv.ROOT, "tests", "ref"))
sys.path.insert(0, os.path.join(testenv.ROOT, "tests", "ref", "hviske_asr"))
sys.path.insert(0, os.path.join(testenv.ROOT, "tests", "ref", "vevo2"))
import gguf_np  # noqa: E402
import kquant_ref as kq  # noqa: E402
import make_gguf  # noqa: E402
import st_io  # noqa: E402

WORK = testenv.work("quantize_cli")
KINDS = ("f16", "bf16", "q8_0", "q4_k", "q6_k")
# the conversion's audio SNR (dB) against the F32 folder, tiny package: measured Q6_K 31.8, Q4_K 20.9
SNR_FLOOR = {"q6_k": 27, "q4_k": 16}


def quantize(src, name, kind, *extra):
    out = os.path.join(WORK, name)
    rc, _, err = audioc("quantize", src, out, "--type", kind, *extra)
    assert rc == 0, f"quantize {src} --type {kind}: exit {rc}: {err.strip()[-400:]}"
    return out


def leftovers():
    return [f for f in os.listdir(WORK) if f.startswith(".")]


def check_tensor(t, a, stored, kind, where):
    """T (read back) against the input's values A stored as STORED: as stored, or KIND's encoding."""
    if t["type"] == stored:
        assert np.array_equal(gguf_np.values(t), a), f"{where}: {t['name']} changed"
        return False
    allowed = {kind.upper()} | ({"Q8_0"} if kind in ("q4_k", "q6_k") else set()) | \
        ({"BF16"} if kind in ("q8_0", "q4_k", "q6_k") else set())
    assert t["type"] in allowed, f"{where}: {t['name']} is {t['type']} (stored {stored}, asked {kind})"
    want = gguf_np.encode(a, t["type"]) if t["type"] in ("F16", "BF16") else \
        kq.quantize(t["type"].lower(), np.asarray(a, np.float32).reshape(-1))
    assert t["data"] == want, f"{where}: {t['name']} ({t['type']}) differs from the oracle's encoding"
    return True


# ---- Hviske ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def clip():
    raw, out = os.path.join(WORK, "raw.wav"), os.path.join(WORK, "clip.wav")
    subprocess.run(["espeak-ng", "-v", "da", "-w", raw, "Hej med dig, hvordan går det i dag?"], check=True)
    subprocess.run(["sox", "-D", raw, "-r", "16000", "-b", "16", out], check=True)
    return out


def tokens(clip, model, *extra):
    rc, out, err = audioc("transcribe", "-m", model, "--tokens", *extra, clip)
    assert rc == 0 and out.strip(), f"{model}: exit {rc}: {err.strip()[-300:]}"
    return out


@pytest.fixture(scope="module")
def hviske_files(hviske_tiny):
    return {k: quantize(hviske_tiny, f"hviske-{k}.gguf", k) for k in KINDS}


@pytest.mark.parametrize("kind", ["f16", "bf16", "q8_0"])
def test_hviske_same_as_weights(kind, hviske_tiny, hviske_files, clip):
    """The file gives the tokens --weights KIND gives on the folder."""
    assert tokens(clip, hviske_files[kind]) == tokens(clip, hviske_tiny, "--weights", kind)


def test_hviske_kquants(hviske_tiny, hviske_files, clip):
    """Q6_K keeps the F32 folder's tokens; Q4_K loads and transcribes."""
    assert tokens(clip, hviske_files["q6_k"]) == tokens(clip, hviske_tiny)
    tokens(clip, hviske_files["q4_k"])


@pytest.mark.parametrize("kind", KINDS)
def test_hviske_layout(kind, hviske_tiny, hviske_files):
    """Names, shapes, order, embedded files and every tensor's bytes, read back independently."""
    g = gguf_np.read(hviske_files[kind])
    src, dtypes, _ = st_io.load(os.path.join(hviske_tiny, "model.safetensors"), with_dtypes=True)
    assert [t["name"] for t in g["tensors"]] == list(src), "tensor names or order differ from model.safetensors"
    kv = g["kv"]
    assert kv["general.architecture"] == "audiocpp" and kv["audiocpp.weight_type"] == kind
    assert kv["audiocpp.tensor_sources.names"] == [""] and kv["audiocpp.tensor_sources.paths"] == ["model.safetensors"]
    want_files = {f: open(os.path.join(hviske_tiny, f), "rb").read() for f in os.listdir(hviske_tiny)
                  if not f.endswith(".safetensors")}
    assert g["files"] == want_files, "embedded files differ from the folder's"
    converted = 0
    for t in g["tensors"]:
        assert t["shape"] == list(src[t["name"]].shape), f"{t['name']}: shape {t['shape']}"
        converted += check_tensor(t, src[t["name"]], dtypes[t["name"]], kind, "hviske")
        if "embedding" in t["name"] or "pre_encode" in t["name"]:
            assert t["type"] == dtypes[t["name"]], f"{t['name']}: the rule keeps it, but it is {t['type']}"
    assert converted >= 10, f"{kind}: only {converted} tensors converted"


# ---- Hviske v6 ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def v6_pkg():
    import packages
    return packages.hviske_v6("bf16")


@pytest.fixture(scope="module")
def v6_files(v6_pkg):
    return {k: quantize(v6_pkg, f"v6-{k}.gguf", k) for k in ("f16", "bf16", "q8_0")}


def v6_tokens(model, *extra):
    rc, out, err = audioc("transcribe", "-m", model, "--no-vad", "-f", "json", "--tokens", *extra,
                          os.path.join(testenv.DATA, "asr_validation", "librispeech",
                                       "librispeech_test_other_7902-96591-0000.wav"))
    assert rc == 0, f"{model}: exit {rc}: {err.strip()[-300:]}"
    return [seg["tokens"] for seg in json.loads(out)["segments"]]


@pytest.mark.parametrize("kind", ["f16", "bf16", "q8_0"])
def test_hviske_v6(kind, v6_pkg, v6_files):
    """The runtime's v6 layout (tensors under "weights/", the description naming
    that source, the folder's files embedded), giving --weights KIND's tokens."""
    g = gguf_np.read(v6_files[kind])
    src, dtypes, _ = st_io.load(os.path.join(v6_pkg, "model.safetensors"), with_dtypes=True)
    assert [t["name"] for t in g["tensors"]] == ["weights/" + n for n in src], "not the package's tensors under weights/"
    assert g["kv"]["audiocpp.model_spec.family"] == "hviske_asr_v6"
    assert {"config.json", "tokenizer.json", "tokenizer_config.json"} <= set(g["files"])
    for t in g["tensors"]:
        check_tensor(t, src[t["name"][len("weights/"):]], dtypes[t["name"][len("weights/"):]], kind, "hviske_v6")
    assert v6_tokens(v6_files[kind]) == v6_tokens(v6_pkg, "--weights", kind)


# ---- the VADs -------------------------------------------------------------------------------

def probs(model):
    rc, out, err = audioc("vad", "-m", model, "--probs", CLIP)
    assert rc == 0 and out, f"{model}: exit {rc}: {err.strip()[-300:]}"
    return out


@pytest.mark.parametrize("src", ["silero_file", "marblenet_file", "marblenet_folder"])
def test_vads(src, vad_data):
    """Every tensor keeps f32 (the rule), the probabilities are the input's; MarbleNet's config rides inside."""
    path = {"silero_file": SILERO, "marblenet_file": os.path.join(MARBLE_DIR, "marblenet_vad.safetensors"),
            "marblenet_folder": MARBLE_DIR}[src]
    out = quantize(path, src + ".gguf", "f16")
    g = gguf_np.read(out)
    assert {t["type"] for t in g["tensors"]} <= {"F32", "I64"}, "a VAD tensor was converted"
    if src.startswith("marblenet"):
        assert "marblenet_vad_config.json" in g["files"]
    folder = os.path.join(WORK, src + "_dir")  # a GGUF in a folder, as the runtime lays out downloads
    os.makedirs(folder, exist_ok=True)
    shutil.copy(out, os.path.join(folder, "model.gguf"))
    assert probs(out) == probs(path) == probs(folder)


# ---- Vevo2 ----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def voices(audioc_path):
    raws = {}
    for name, text, voice in (("src", "We will meet at the station at nine.", "en"),
                              ("tgt", "Please call Stella and ask her.", "en+f3")):
        wav, f32 = os.path.join(WORK, name + ".wav"), os.path.join(WORK, name + ".f32")
        subprocess.run(["espeak-ng", "-v", voice, "-w", wav, text], check=True)
        subprocess.run([audioc_path, "convert", "--rate", "24000", wav, wav[:-4] + "_24k.wav"], check=True)
        from scipy.io import wavfile
        wavfile.read(wav[:-4] + "_24k.wav")[1].astype("<f4").tofile(f32)
        raws[name] = f32
    return raws


@pytest.fixture(scope="module")
def audioc_path():
    return testenv.AUDIOC


CONVERTED = {}


def convert(driver, model, voices, name, weights):
    """The conversion driver's ids and audio (seeded noise, 1 thread) for MODEL held as WEIGHTS
    (run once per NAME)."""
    if name in CONVERTED:
        return CONVERTED[name]
    out = os.path.join(WORK, "route_" + name)
    os.makedirs(out, exist_ok=True)
    env = dict(os.environ, AUDIOC_TEST_WEIGHTS=weights)
    r = subprocess.run([driver("test_vevo2_route"), model, voices["src"], voices["tgt"], "0", "-", out, "1"],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 0, f"{name}: {r.stderr.strip()[-400:]}"
    CONVERTED[name] = {k: np.fromfile(os.path.join(out, k + ext), dt)
                       for k, ext, dt in (("src_ids", ".i32", "<i4"), ("tgt_ids", ".i32", "<i4"),
                                          ("wav", ".f32", "<f4"))}
    return CONVERTED[name]


@pytest.fixture(scope="module")
def vevo2_pkg(vevo2_package):
    return vevo2_package("F32", 0)


@pytest.fixture(scope="module")
def vevo2_files(vevo2_pkg):
    return {k: quantize(vevo2_pkg, f"vevo2-{k}.gguf", k) for k in KINDS}


@pytest.mark.parametrize("kind", ["f16", "bf16", "q8_0"])
def test_vevo2_same_as_weights(kind, vevo2_pkg, vevo2_files, driver, voices):
    """The file as stored gives --weights KIND on the folder; the q8_0 file, whose Coco downsampling
    convolutions ([H, H, 3]: GGUF rows of 3) stay F32, does with --weights q8_0, which converts them."""
    got = convert(driver, vevo2_files[kind], voices, "gguf_" + kind, "q8_0" if kind == "q8_0" else "stored")
    want = convert(driver, vevo2_pkg, voices, "folder_" + kind, kind)
    assert all(np.array_equal(got[k], want[k]) for k in got), f"{kind}: the file differs from --weights {kind}"


def test_vevo2_tokenizer(vevo2_pkg, vevo2_files):
    """The AR tokenizer embedded in the file gives the folder's ids."""
    toks = [audioc("tokenize", "--model", m, "--", "Hello world", "<|im_start|>user")[1]
            for m in (vevo2_pkg, vevo2_files["q8_0"])]
    assert toks[0] and toks[0] == toks[1], f"audioc tokenize: {toks}"


@pytest.mark.parametrize("kind", list(SNR_FLOOR))
def test_vevo2_kquants(kind, vevo2_pkg, vevo2_files, driver, voices):
    got = convert(driver, vevo2_files[kind], voices, "gguf_" + kind, "stored")
    want = convert(driver, vevo2_pkg, voices, "folder_f32", "stored")
    w = want["wav"].astype(np.float64)
    snr = 10 * np.log10(np.sum(w ** 2) / np.sum((got["wav"] - w) ** 2))
    same = [float(np.mean(got[k] == want[k])) for k in ("src_ids", "tgt_ids")]
    print(f"{kind}: audio SNR {snr:.1f} dB against the F32 folder; ids equal: {same[0]:.0%}, {same[1]:.0%}")
    assert snr > SNR_FLOOR[kind], f"{kind}: SNR {snr:.1f} dB below {SNR_FLOOR[kind]}"


def vevo2_layout(path, pkg, kind):
    """The runtime's layout of PATH, its tensors against the folder PKG's; returns the read file."""
    g = gguf_np.read(path)
    kv = g["kv"]
    assert kv["audiocpp.model_spec.family"] == "vevo2" and kv["audiocpp.model_spec.version"] == 1
    spec = json.loads(kv["audiocpp.model_spec.json"])
    src = [s for s in spec["sources"] if s["format"] == "gguf"][0]
    assert set(src["tensors"]) == set(make_gguf.PARTS), f"parts: {sorted(src['tensors'])}"
    assert all(v == {"source": "weights:", "prefix": k} for k, v in src["tensors"].items())
    assert set(src["files"]) >= set(make_gguf.FILES) - {"ar_tokenizer_config"}
    for key, value in src["files"].items():
        assert value.startswith("model:") and value[6:] in g["files"], f"{key}: {value} is not embedded"
    names = {t["name"].split("/", 1)[0] for t in g["tensors"]}
    assert names == set(make_gguf.PARTS), f"namespaces: {sorted(names)}"
    paths = dict(zip(kv["audiocpp.tensor_sources.names"], kv["audiocpp.tensor_sources.paths"]))
    stores, converted = {}, 0
    for t in g["tensors"]:
        part, name = t["name"].split("/", 1)
        if part not in stores:
            stores[part] = st_io.load(os.path.join(pkg, paths[part]), with_dtypes=True)
        values, dtypes, _ = stores[part]
        converted += check_tensor(t, values[name], dtypes[name], kind, "vevo2")
    assert converted >= 20, f"{kind}: only {converted} tensors converted"
    return g


@pytest.mark.parametrize("kind", KINDS)
def test_vevo2_layout(kind, vevo2_pkg, vevo2_files):
    g = vevo2_layout(vevo2_files[kind], vevo2_pkg, kind)
    for rel in ("vocoder/config.json", make_gguf.FM + "/config.json", make_gguf.AR + "/tokenizer.json"):
        assert g["files"][rel] == open(os.path.join(vevo2_pkg, rel), "rb").read(), f"{rel} not embedded as it is"


def test_vevo2_from_gguf(vevo2_pkg, driver, voices):
    """A runtime GGUF with every namespace and path renamed (found through its description):
    quantized, the same tensors and the same conversion as from the folder."""
    src = make_gguf.make(vevo2_pkg, os.path.join(WORK, "vevo2-renamed.gguf"), renamed=True)
    out = quantize(src, "vevo2-renamed-q8_0.gguf", "q8_0")
    # the runtime's file holds the Hugging Face encoder (openai/whisper-medium): the folder's file with it
    folder = quantize(vevo2_pkg, "vevo2-hfwhisper-q8_0.gguf", "q8_0", "--whisper",
                      os.path.join(vevo2_pkg, make_gguf.WHISPER))
    got, want = gguf_np.read(out), gguf_np.read(folder)
    key = lambda g: {t["name"]: (t["type"], t["data"]) for t in g["tensors"]}  # noqa: E731
    assert key(got) == key(want), "the renamed GGUF's tensors differ from the folder's file"
    assert all(n.startswith("pkg/") for n in got["files"])
    a = convert(driver, out, voices, "renamed_q8_0", "q8_0")
    b = convert(driver, folder, voices, "hfwhisper_q8_0", "q8_0")
    assert all(np.array_equal(a[k], b[k]) for k in a)


# ---- refusals -------------------------------------------------------------------------------

def refused(args, code, *needles):
    before = set(os.listdir(WORK))
    rc, _, err = audioc("quantize", *args)
    assert rc == code, f"{args}: exit {rc}: {err.strip()[-300:]}"
    for n in needles:
        assert n in err, f"{args}: '{n}' not in {err.strip()[-300:]!r}"
    assert set(os.listdir(WORK)) <= before and not leftovers(), f"{args} left files behind"


def test_refusals(hviske_tiny, hviske_files):
    out = os.path.join(WORK, "refused.gguf")
    refused([hviske_tiny, out, "--type", "q5_k"], 2, "unknown type 'q5_k'", "q4_k")
    refused([hviske_tiny, out], 2, "--type is required")
    refused([os.path.join(WORK, "no-such-model"), out, "--type", "f16"], 1, "no-such-model", "no such file")
    refused([hviske_tiny, os.path.join(WORK, "no-such-dir", "x.gguf"), "--type", "f16"], 1, "does not exist")
    refused([hviske_tiny, WORK, "--type", "f16"], 2, "is a folder")
    refused([hviske_files["q8_0"], out, "--type", "q4_k"], 1, "is already Q8_0", "quantize the package it was made from")
    # from F16 is allowed
    again = quantize(hviske_files["f16"], "hviske-f16-q8_0.gguf", "q8_0")
    assert {t["type"] for t in gguf_np.read(again)["tensors"]} >= {"Q8_0"}


def test_help():
    rc, out, _ = audioc("quantize", "--help")
    assert rc == 0 and "--type" in out and "hf:" in out and "temporary name" in out
