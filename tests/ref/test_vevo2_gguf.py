"""Vevo2 as the ggml audio runtime publishes it: one GGUF file with every
part's tensors under a namespace and every config and tokenizer file
embedded, found through the file's own package description
(tests/ref/vevo2/make_gguf.py writes it from the tiny package folder of
make_package.py; docs/models/vevo2_gguf.md).

Checked, against the folder the file was made from:
- F32, F16 and BF16 files: the content-style ids and the converted audio of the
  conversion driver (test_vevo2_route, seeded noise) bit-identical, and
  `audioc vc` (the file in a folder under its release name) and
  `audioc tts` (the AR route: tokenizer, AR model, prosody tokenizer) give
  the same samples, and `audioc tokenize` the same ids;
- a file whose namespaces and embedded paths are all renamed: the same, so
  the description is what finds the parts;
- Q8_0, Q6_K and Q4_K files: the ids of a folder holding the values each
  stores, and its audio within 60 dB; the audio's SNR against the F32
  folder printed and held above a floor (measured: see SNR_FLOOR), and the
  share of ids equal to the F32 folder's printed (the random tokenizer's
  near-ties go either way under quantization);
- a file without Whisper: the encoder found as for a folder (--whisper);
- malformed files: a namespace missing, an embedded config missing, each
  refused naming the file and the namespace or file.
About 15 s."""
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
from scipy.io import wavfile

import testenv

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "vevo2"))
import make_gguf  # noqa: E402
import route_common  # noqa: E402
from route_common import RATE, load24, raw, run  # noqa: E402

WORK = testenv.work("vevo2_gguf")
SEED = 11
# the SNR (dB) of the conversion's audio from each quantized file against the F32 folder's;
# measured on the tiny package: Q8_0 37.6, Q6_K 31.6, Q4_K 22.5; the floors leave 5 dB.
# Against a folder of the values each file stores: 119.6-119.8 dB.
SNR_FLOOR = {"Q8_0": 32, "Q6_K": 26, "Q4_K": 17}
VOICE_TEXT = "Please call Stella and ask her to bring these things."


@pytest.fixture(scope="module")
def route(driver):
    return driver("test_vevo2_route")


@pytest.fixture(scope="module")
def voices():
    src = route_common.speech(WORK, "src", "We will meet at the station at nine.", "en", 40, RATE)
    tgt = route_common.speech(WORK, "tgt", VOICE_TEXT, "en+f3", 75, RATE, 3.3)
    return {"src": src, "tgt": tgt, "src_f32": raw(os.path.join(WORK, "src.f32"), load24(src)),
            "tgt_f32": raw(os.path.join(WORK, "tgt.f32"), load24(tgt))}


def gguf(pkg, name, **kw):
    return make_gguf.make(pkg, os.path.join(WORK, name + ".gguf"), **kw)


def convert(route, model, voices, name):
    """The driver's ids and audio (seeded noise) for MODEL."""
    out = os.path.join(WORK, "out_" + name)
    os.makedirs(out, exist_ok=True)
    r = run(route, model, voices["src_f32"], voices["tgt_f32"], 0, "-", out)
    assert r.returncode == 0, f"{name}: {r.stderr.strip()[-400:]}"
    return {k: np.fromfile(os.path.join(out, k + ext), dt)
            for k, ext, dt in (("src_ids", ".i32", "<i4"), ("tgt_ids", ".i32", "<i4"), ("wav", ".f32", "<f4"))}


def same(a, b):
    return all(np.array_equal(a[k], b[k]) for k in a)


@pytest.fixture(scope="module")
def folder(vevo2_package, route, voices):
    """name -> (package folder, its driver output) for F32, F16 and BF16."""
    got = {}
    for dtype in ("F32", "F16", "BF16"):
        pkg = vevo2_package(dtype, SEED)
        got[dtype] = pkg, convert(route, pkg, voices, "folder_" + dtype)
    return got


@pytest.mark.parametrize("kind", ["F32", "F16", "BF16"])
def test_conversion(kind, folder, route, voices):
    """Files of the F32, F16 and BF16 folders, every tensor in its source type (the runtime's
    --type orig: the F16 and BF16 packages keep their F32 Whisper stats), give the ids and audio
    of their folders bit for bit."""
    pkg, want = folder[kind]
    got = convert(route, gguf(pkg, "vevo2-" + kind.lower(), kind="orig"), voices, "gguf_" + kind)
    assert same(got, want), f"{kind} GGUF differs from its folder"


def test_renamed(folder, route, voices):
    """Namespaces and embedded paths renamed: the description finds them."""
    pkg, want = folder["F32"]
    got = convert(route, gguf(pkg, "vevo2-renamed", renamed=True), voices, "renamed")
    assert same(got, want), "the renamed GGUF differs from its folder"


def samples(path):
    return wavfile.read(path)[1]


def test_cli(folder, voices, audioc):
    """audioc vc (the file in a folder under its release name) and audioc tts give the folder's samples."""
    pkg, _ = folder["F32"]
    d = os.path.join(WORK, "Vevo2-GGUF")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    shutil.copy(gguf(pkg, "vevo2-f32"), os.path.join(d, "vevo2-f32.gguf"))
    for cmd, args in (("vc", ["-r", voices["tgt"], voices["src"], "--pitch-shift", "0"]),
                      ("tts", ["--voice", voices["tgt"], "--voice-text", VOICE_TEXT, "--temperature", "0",
                               "--max-tokens", "40", "Good morning."])):
        outs = []
        for model in (pkg, d):
            out = os.path.join(WORK, f"cli_{cmd}_{len(outs)}.wav")
            r = run(audioc, cmd, "-m", model, *args, "--steps", "4", "--seed", "5", "--float", "-o", out)
            assert r.returncode == 0, f"audioc {cmd} -m {model}: {r.stderr.strip()[-400:]}"
            outs.append(samples(out))
        assert np.array_equal(*outs), f"audioc {cmd}: the GGUF in a folder gives other samples than the folder"
    toks = [run(audioc, "tokenize", "--model", m, "--", "Hello world", "<|im_start|>user").stdout
            for m in (pkg, os.path.join(d, "vevo2-f32.gguf"))]
    assert toks[0] and toks[0] == toks[1], f"audioc tokenize: the GGUF's embedded tokenizer differs: {toks}"


def snr(got, want):
    return 10 * np.log10(np.sum(want.astype(np.float64) ** 2) / np.sum((got - want).astype(np.float64) ** 2))


def values_folder(pkg, kind):
    """A copy of the folder PKG whose parts hold, as F32, the values the GGUF of KIND stores
    (quantized and back by the numpy oracle): the same model through the plain f32 path."""
    out = os.path.join(WORK, "values_" + kind)
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(pkg, out)
    for rel in make_gguf.PARTS.values():
        t = make_gguf.st_io.load(os.path.join(pkg, rel))
        for name, a in t.items():
            k = make_gguf.gguf_np.pick(name, a.shape, kind) if a.dtype.kind == "f" else None
            if k in make_gguf.gguf_np.BLOCK:
                t[name] = make_gguf.gguf_np.kq.dequantize(k.lower(), make_gguf.gguf_np.encode(a, k)).reshape(a.shape)
            elif k == "F16":
                t[name] = a.astype(np.float16).astype(np.float32)
        make_gguf.st_io.save(os.path.join(out, rel), t)
    if os.path.exists(os.path.join(out, make_gguf.WHISPER)):  # the folder's own encoder: the values of the GGUF's
        shutil.rmtree(os.path.join(out, "whisper-medium"))
        shutil.copytree(os.path.join(out, make_gguf.WHISPER), os.path.join(out, "whisper-medium"))
    os.remove(os.path.join(out, make_gguf.FM, "whisper_stats.pt"))
    return out


@pytest.mark.parametrize("kind", list(SNR_FLOOR))
def test_quantized(kind, folder, route, voices):
    """Quantized files: the ids of a folder holding the values they store, and audio above the
    SNR floor against the F32 folder (the ids the F32 folder gives: printed; its random
    tokenizer has near-ties that quantization resolves either way)."""
    pkg, want = folder["F32"]
    got = convert(route, gguf(pkg, "vevo2-" + kind.lower(), kind=kind), voices, "gguf_" + kind)
    vals = convert(route, values_folder(pkg, kind), voices, "values_" + kind)
    s, sv = snr(got["wav"], want["wav"]), snr(got["wav"], vals["wav"])
    same_ids = [float(np.mean(got[k] == want[k])) for k in ("src_ids", "tgt_ids")]
    print(f"{kind}: audio SNR {s:.1f} dB against the F32 folder, {sv:.1f} dB against the folder of its values; "
          f"ids equal to the F32 folder's: source {same_ids[0]:.0%}, target {same_ids[1]:.0%}")
    assert np.array_equal(got["src_ids"], vals["src_ids"]) and np.array_equal(got["tgt_ids"], vals["tgt_ids"]), \
        f"{kind}: content-style ids differ from those of the folder of the same values"
    assert s > SNR_FLOOR[kind], f"{kind}: audio SNR {s:.1f} dB is below {SNR_FLOOR[kind]} dB"
    assert sv > 60, f"{kind}: audio SNR {sv:.1f} dB against the folder of its values (want > 60)"


def test_whisper_outside(folder, voices, audioc):
    """A file without Whisper takes the encoder as a folder does: --whisper, else refused naming --whisper."""
    pkg, _ = folder["F32"]
    g = gguf(pkg, "vevo2-nowhisper", drop=("whisper_weights",))
    args = ["-r", voices["tgt"], voices["src"], "--pitch-shift", "0", "--steps", "4", "--seed", "5", "--float"]
    env = dict(os.environ, HOME=os.path.join(WORK, "no_home"), XDG_CACHE_HOME=os.path.join(WORK, "no_cache"))
    r = run(audioc, "vc", "-m", g, *args, "-o", os.path.join(WORK, "nw.wav"), env=env)
    assert r.returncode == 1 and "--whisper" in r.stderr, f"no Whisper: exit {r.returncode}: {r.stderr[-300:]}"
    outs = []
    for model, extra in ((g, ["--whisper", os.path.join(pkg, "whisper-medium")]), (pkg, [])):
        out = os.path.join(WORK, f"nw_{len(outs)}.wav")
        r = run(audioc, "vc", "-m", model, *extra, *args, "-o", out)
        assert r.returncode == 0, r.stderr[-300:]
        outs.append(samples(out))
    assert np.array_equal(*outs), "--whisper with a GGUF without Whisper gives other samples than the folder"


BAD = [("namespace missing", {"drop": ("fm_weights",)}, ["no tensors under the namespace 'fm_weights/'"]),
       ("AR namespace missing", {"drop": ("ar_weights",)}, ["no tensors under the namespace 'ar_weights/'"]),
       ("embedded config missing", {"drop_files": ("vocoder/config.json",)},
        ["no embedded file 'vocoder/config.json'"])]


@pytest.mark.parametrize("what,kw,needles", BAD, ids=[b[0] for b in BAD])
def test_malformed(what, kw, needles, folder, voices, audioc):
    """Each malformed file is refused naming the file and the namespace or embedded file."""
    pkg, _ = folder["F32"]
    g = gguf(pkg, "bad_" + what.replace(" ", "_"), **kw)
    cmd = ["tts", "--voice", voices["tgt"], "hello"] if "AR" in what else ["vc", "-r", voices["tgt"], voices["src"]]
    r = run(audioc, *cmd, "-m", g, "--steps", "2", "-o", os.path.join(WORK, "bad.wav"))
    assert r.returncode == 1 and os.path.basename(g) in r.stderr and all(n in r.stderr for n in needles) \
        and "Sanitizer" not in r.stderr, f"{what}: exit {r.returncode}: {r.stderr.strip()[-300:]}"
