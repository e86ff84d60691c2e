"""Parity of Vevo2's timbre mel, Coco tokenizers and Vocos vocoder
(src/models/vevo2, src/nn/vocos_backbone, src/nn/vq) with the PyTorch
references of tests/ref/vevo2, on tiny random packages written at the
published paths (coco_ref.write_tiny, vocoder_ref.write_tiny).

Stages and tolerances (max |C - ref| / max |ref|):
  timbre mel            1e-5   espeak-ng speech at 24 kHz over a noise floor at -50 dB (a recording's),
                               a clip of a multiple of 1920 samples and one not;
                        1e-3   the clean synthetic speech: it has no energy above 11 kHz, and there the
                               mel is float32 FFT rounding (C and torch both ~5e-4 from float64, reported)
  Coco latents          1e-4   content-style and prosody, random Whisper features and chroma
  Coco ids              exact, except frames whose top-2 cosine gap is < 1e-4 (reported, skipped)
  vocoder audio         1e-4   F32, F16 and BF16 weights (the reference reads the same rounded weights);
                               1 and 2 threads within 1e-5 (OpenBLAS rounds a product differently as the
                               pool slices it), and the same bits with our kernels only
  mel resynthesis       1e-4   wav -> C timbre mel -> C vocoder, F*480 samples
and the load errors of broken packages (each names the file and the problem).
"""
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import pytest
from scipy.io import wavfile

import testenv

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "vevo2"))
sys.path.insert(0, os.path.join(HERE, "hviske_asr"))
import coco_ref  # noqa: E402
import make_speech  # noqa: E402
import st_io  # noqa: E402
import timbre_mel_ref  # noqa: E402
import vocoder_ref  # noqa: E402

WORK = os.path.join(testenv.WORK, "vevo2_vocos")
SPEECH = ("en_us_24k_mono", "en-us", "en", [0.4], 0.3, 0.3, 24000, None, -3)
GAP_TOL = 1e-4
NOISE = 0.003  # rms of the noise floor under the speech (-50 dB)
DTYPES = ["F32", "F16", "BF16"]
MELS = ["clip", "few_frames"]
THREADS = ("1", "2", "1 noblas", "2 noblas")


@pytest.fixture(scope="module")
def vocos(driver):
    return driver("test_vevo2_vocos")


@pytest.fixture(scope="module")
def run(vocos):
    def call(*args):
        p = subprocess.run([vocos, *args], capture_output=True, text=True)
        sys.stderr.write(p.stderr)
        return p
    return call


def raw(path, a):
    np.ascontiguousarray(a).astype("<f4" if a.dtype.kind == "f" else "<i4").tofile(path)
    return path


def rel(a, b):
    return float(np.max(np.abs(a.astype(np.float64) - b))) / max(float(np.max(np.abs(b))), 1e-12)


@pytest.fixture(scope="module")
def pkgs():
    """The tiny packages by dtype (vocoder seed 11; Coco seed 3 in the F32 one), in a fresh work folder."""
    if os.path.exists(WORK):
        shutil.rmtree(WORK)
    os.makedirs(WORK)
    out = {}
    for dtype in DTYPES:
        out[dtype] = os.path.join(WORK, "pkg_" + dtype.lower())
        vocoder_ref.write_tiny(out[dtype], seed=11, dtype=dtype)
    coco_ref.write_tiny(out["F32"], seed=3)
    return out


@pytest.fixture(scope="module")
def clips(pkgs):
    """espeak-ng speech at 24 kHz over a noise floor, a multiple of 1920 samples long and not,
    and the clean speech cut the same ways."""
    with tempfile.TemporaryDirectory() as tmp:
        info = make_speech.make_clip(tmp, WORK, SPEECH)
    rate, x = wavfile.read(os.path.join(WORK, info["file"]))
    assert rate == 24000
    x = (x.astype(np.float32) / 32768.0).astype(np.float32)
    n = len(x) // 1920 * 1920
    noisy = (x + NOISE * np.random.default_rng(5).standard_normal(len(x))).astype(np.float32)
    return {"multiple": noisy[:n], "not_multiple": noisy[:n - 1920 + 1234],
            "clean_multiple": x[:n], "clean_not_multiple": x[:n - 1920 + 1234]}


def test_selftest(vocos):
    """The driver's own checks pass."""
    p = subprocess.run([vocos, "selftest"], capture_output=True, text=True)
    assert p.returncode == 0, f"selftest failed: {p.stderr[-1000:]}"


def mel_f64(wav, pre):
    """The timbre mel in float64 (numpy), to tell rounding from error."""
    n_fft, hop = pre["n_fft"], pre["hop_size"]
    x = np.pad(wav.astype(np.float64), ((n_fft - hop) // 2,) * 2, mode="reflect")
    frames = np.stack([x[t * hop:t * hop + n_fft] for t in range(len(wav) // hop)])
    window = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(n_fft) / n_fft)
    mag = np.sqrt(np.abs(np.fft.rfft(frames * window, axis=1)) ** 2 + 1e-9)
    mel = mag @ timbre_mel_ref.slaney_mel(pre["num_mels"], n_fft, pre["sample_rate"], pre["fmin"], pre["fmax"]).T
    return (np.log(np.maximum(mel, 1e-5)) - pre["mel_mean"]) / np.sqrt(pre["mel_var"])


@pytest.mark.parametrize("name", ["multiple", "not_multiple", "clean_multiple", "clean_not_multiple"])
def test_timbre_mel(name, pkgs, clips, run):
    """The C timbre mel of a clip within 1e-5 of the reference's (1e-3 on the clean speech)."""
    pkg, wav = pkgs["F32"], clips[name]
    pre = vocoder_ref.read_relaxed_json(os.path.join(pkg, "vocoder", "config.json"))["preprocess"]
    tol = 1e-3 if name.startswith("clean") else 1e-5
    want = timbre_mel_ref.timbre_mel(wav, pre)
    out = os.path.join(WORK, f"mel_{name}.f32")
    p = run("mel", os.path.join(pkg, "vocoder", "config.json"), raw(os.path.join(WORK, f"{name}.f32"), wav),
            str(len(wav)), out)
    assert p.returncode == 0, f"timbre mel {name}: driver failed"
    got = np.fromfile(out, dtype="<f4")
    T = len(wav) // 480
    assert got.size == T * 128 and want.shape == (T, 128), \
        f"timbre mel {name}: {got.size} values, reference {want.shape}, expected [{T}][128]"
    d = rel(got.reshape(T, 128), want)
    exact = mel_f64(wav, pre)
    print(f"timbre mel {name}: N {len(wav)} (N % 1920 = {len(wav) % 1920}), {T} frames: max relative difference "
          f"{d:.2e} (tolerance {tol:g}); from float64: C {rel(got.reshape(T, 128), exact):.1e}, "
          f"torch {rel(want, exact):.1e}")
    assert d <= tol, f"timbre mel {name}: relative difference {d:.3g} > {tol:g}"


@pytest.fixture(scope="module")
def coco_inputs(pkgs):
    """(key, T) -> random Whisper features and chroma, drawn from one seeded generator in a fixed order."""
    cfgs = coco_ref.configs(pkgs["F32"])
    assert set(cfgs) == set(coco_ref.FILES)
    rng = np.random.default_rng(7)
    out = {}
    for key, c in cfgs.items():
        for T in (103, 64):
            whisper = rng.standard_normal((T, c["whisper_dim"]), dtype=np.float32)
            out[key, T] = c, whisper, rng.random((T, c["chromagram_dim"]), dtype=np.float32)
    return out


@pytest.mark.parametrize("T", [103, 64])
@pytest.mark.parametrize("key", list(coco_ref.FILES))
def test_coco(key, T, pkgs, coco_inputs, run):
    """Coco latents within 1e-4, ids equal except frames whose top-2 cosine gap is below 1e-4."""
    pkg = pkgs["F32"]
    c, whisper, chroma = coco_inputs[key, T]
    path = os.path.join(pkg, coco_ref.FILES[key])
    lat, ids, gaps = coco_ref.coco_encode(path, c, whisper if c["coco_type"] == "content_style" else None, chroma)
    w_in = raw(os.path.join(WORK, "whisper.f32"), whisper) if c["coco_type"] == "content_style" else "-"
    outs = [os.path.join(WORK, f"coco_{key}_{T}.{s}") for s in ("lat", "ids", "gaps")]
    p = run("coco", os.path.join(pkg, coco_ref.AMPHION_CONFIG), key, path, w_in,
            raw(os.path.join(WORK, "chroma.f32"), chroma), str(T), *outs)
    assert p.returncode == 0, f"coco {key} T {T}: driver failed"
    n = -(-T // c["downsample_rate"])
    g_lat = np.fromfile(outs[0], dtype="<f4")
    g_ids = np.fromfile(outs[1], dtype="<i4")
    assert g_lat.size == n * c["codebook_dim"] and g_ids.size == n and lat.shape[0] == n, \
        f"coco {key} T {T}: {g_ids.size} tokens, reference {lat.shape[0]}, expected {n}"
    d = rel(g_lat.reshape(lat.shape), lat)
    near = gaps < GAP_TOL
    print(f"coco {key} T {T} -> {n} tokens: latents {d:.2e}; ids {int(np.sum(g_ids == ids))}/{n} equal, "
          f"{int(np.sum(near))} near-ties (gap < {GAP_TOL:g}) skipped, smallest gap {gaps.min():.2e}")
    assert d <= 1e-4, f"coco {key} T {T}: latents differ by {d:.3g} > 1e-4"
    bad = int(np.sum((g_ids != ids) & ~near))
    assert bad == 0, f"coco {key} T {T}: {bad} ids differ away from near-ties"


@pytest.fixture(scope="module")
def mels(pkgs, clips):
    """The reference's timbre mel of the noisy clip, and 20 of its frames (few frames: narrow
    weights are read row by row, not in f32 panels)."""
    pre = vocoder_ref.read_relaxed_json(os.path.join(pkgs["F32"], "vocoder", "config.json"))["preprocess"]
    mel = timbre_mel_ref.timbre_mel(clips["multiple"], pre)
    return {"clip": mel, "few_frames": mel[100:120]}


@pytest.mark.parametrize("which", MELS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_vocoder(dtype, which, pkgs, mels, run):
    """The vocoder's audio within 1e-4 of the reference's (with and without OpenBLAS);
    1 and 2 threads within 1e-5, and the same bits with our kernels only."""
    mel = mels[which]
    F = mel.shape[0]
    mel_path = raw(os.path.join(WORK, f"voc_mel_{F}.f32"), mel)
    folder = os.path.join(pkgs[dtype], "vocoder")
    want = vocoder_ref.vocoder(folder, mel)
    got = {}
    for threads in THREADS:
        out = os.path.join(WORK, f"voc_{dtype}_{F}_{threads.replace(' ', '_')}.f32")
        p = run("vocoder", os.path.join(folder, "config.json"), os.path.join(folder, "model.safetensors"),
                mel_path, str(F), out, *threads.split())
        assert p.returncode == 0, f"vocoder {dtype}: driver failed on {threads} thread(s)"
        got[threads] = np.fromfile(out, dtype="<f4")
    assert got["1"].size == F * 480 == want.size, \
        f"vocoder {dtype}: {got['1'].size} samples, reference {want.size}, expected {F * 480}"
    d, d_ours = rel(got["1"], want), rel(got["1 noblas"], want)
    assert d <= 1e-4 and d_ours <= 1e-4, \
        f"vocoder {dtype}: audio differs by {d:.3g} ({d_ours:.3g} without OpenBLAS) > 1e-4"
    threads = rel(got["2"], got["1"])
    same = np.array_equal(got["1 noblas"], got["2 noblas"])
    assert threads <= 1e-5 and same, (f"vocoder {dtype}: 1 and 2 threads differ by {threads:.3g}; "
                                      f"without OpenBLAS {'identical' if same else 'DIFFERENT'}")


@pytest.mark.parametrize("name", ["multiple", "not_multiple"])
def test_resynthesis(name, pkgs, clips, run):
    """wav -> C timbre mel -> C vocoder: F*480 samples within 1e-4 of the reference's."""
    wav = clips[name]
    folder = os.path.join(pkgs["F32"], "vocoder")
    pre = vocoder_ref.read_relaxed_json(os.path.join(folder, "config.json"))["preprocess"]
    want = vocoder_ref.vocoder(folder, timbre_mel_ref.timbre_mel(wav, pre))
    out = os.path.join(WORK, f"resynth_{name}.f32")
    p = run("resynth", os.path.join(folder, "config.json"), os.path.join(folder, "model.safetensors"),
            raw(os.path.join(WORK, f"{name}.f32"), wav), str(len(wav)), out)
    assert p.returncode == 0, f"resynthesis {name}: driver failed"
    got = np.fromfile(out, dtype="<f4")
    F = len(wav) // 480
    assert got.size == F * 480 == want.size, f"resynthesis {name}: {got.size} samples, expected {F * 480}"
    d = rel(got, want)
    assert d <= 1e-4, f"resynthesis {name}: audio differs by {d:.3g} > 1e-4"


# broken packages

def broken_json(src, name, edit):
    cfg = vocoder_ref.read_relaxed_json(src)
    edit(cfg)
    out = os.path.join(WORK, "bad", name, os.path.basename(src))
    vocoder_ref.write_relaxed_json(out, cfg, "broken on purpose")
    return out


def broken_st(src, name, edit):
    t, dtypes, _ = st_io.load(src, with_dtypes=True)
    edit(t)
    out = os.path.join(WORK, "bad", name, os.path.basename(src))
    os.makedirs(os.path.dirname(out), exist_ok=True)
    st_io.save(out, {k: (dtypes.get(k, "F32"), v) for k, v in t.items()})
    return out


def drop(name):
    return lambda t: t.pop(name)


def shorten(name):
    return lambda t: t.__setitem__(name, t[name][:-1])


def zero_row(name, row):
    def edit(t):
        t[name] = t[name].copy()
        t[name][row] = 0
    return edit


def bad_cases(pkg):
    """(name, driver arguments, what the message names) of each broken package made from PKG."""
    vcfg = os.path.join(pkg, "vocoder", "config.json")
    vw = os.path.join(pkg, "vocoder", "model.safetensors")
    acfg = os.path.join(pkg, coco_ref.AMPHION_CONFIG)
    cs = os.path.join(pkg, coco_ref.FILES["coco_content_style"])
    pr = os.path.join(pkg, coco_ref.FILES["coco_style"])
    vocos = lambda f: lambda c: f(c["model"]["vocos"])  # noqa: E731
    coco = lambda k, f: lambda c: f(c["model"][k])  # noqa: E731
    wn = coco_ref.QUANT + "in_project.weight_v"
    return [
        ("voc_missing", ["load-vocoder", vcfg, broken_st(vw, "voc_missing", drop("backbone.convnext.1.pwconv2.bias"))],
         ["model.safetensors", "missing tensor 'backbone.convnext.1.pwconv2.bias'"]),
        ("voc_shape", ["load-vocoder", vcfg, broken_st(vw, "voc_shape", shorten("head.out.weight"))],
         ["model.safetensors", "'head.out.weight'", "shape [1921, 32]", "expected [1922, 32]"]),
        ("voc_window", ["load-vocoder", vcfg, broken_st(vw, "voc_window", shorten("head.istft.window"))],
         ["model.safetensors", "'head.istft.window'", "expected [1920]"]),
        ("voc_no_dim", ["load-vocoder", broken_json(vcfg, "voc_no_dim", vocos(lambda v: v.pop("dim"))), vw],
         ["config.json", "missing key 'model.vocos.dim'"]),
        ("voc_type", ["load-vocoder", broken_json(vcfg, "voc_type", vocos(lambda v: v.update(num_layers="2"))), vw],
         ["config.json", "'model.vocos.num_layers' must be an integer"]),
        ("voc_dims", ["load-vocoder", broken_json(vcfg, "voc_dims", vocos(lambda v: v.update(dim=48))), vw],
         ["model.safetensors", "'backbone.embed.weight'", "expected [48, 128, 7]"]),
        ("voc_padding", ["load-vocoder", broken_json(vcfg, "voc_padding", vocos(lambda v: v.update(padding="center"))),
                         vw], ["config.json", "'model.vocos.padding' is 'center'"]),
        ("voc_mel_var", ["load-vocoder", broken_json(vcfg, "voc_mel_var", lambda c: c["preprocess"].pop("mel_var")),
                         vw], ["config.json", "missing key 'preprocess.mel_var'"]),
        ("voc_no_file", ["load-vocoder", vcfg, os.path.join(WORK, "bad", "nothing.safetensors")],
         ["nothing.safetensors"]),
        ("coco_zero_norm", ["load-coco", acfg, "coco_content_style", broken_st(cs, "coco_zero_norm", zero_row(wn, 1))],
         ["model.safetensors", f"row 1 of tensor '{wn}' has zero norm"]),
        ("coco_missing", ["load-coco", acfg, "coco_style", broken_st(pr, "coco_missing", drop("encoder.0.convnext.1.gamma"))],
         ["model.safetensors", "missing tensor 'encoder.0.convnext.1.gamma'"]),
        ("coco_down", ["load-coco", acfg, "coco_style", broken_st(pr, "coco_down", drop("downsample_layers.4.bias"))],
         ["model.safetensors", "missing tensor 'downsample_layers.4.bias'"]),
        ("coco_codebook", ["load-coco", acfg, "coco_content_style",
                           broken_st(cs, "coco_codebook", shorten(coco_ref.QUANT + "codebook.weight"))],
         ["model.safetensors", f"'{coco_ref.QUANT}codebook.weight'", "shape [63, 4]", "expected [64, 4]"]),
        ("coco_no_layers", ["load-coco", broken_json(acfg, "coco_no_layers", coco(
            "coco_content_style", lambda c: c["encoder"].pop("vocos_num_layers"))), "coco_content_style", cs],
         ["amphion_config.json", "missing key 'model.coco_content_style.encoder.vocos_num_layers'"]),
        ("coco_rate_type", ["load-coco", broken_json(acfg, "coco_rate_type", coco(
            "coco_style", lambda c: c.update(downsample_rate=8.5))), "coco_style", pr],
         ["amphion_config.json", "'model.coco_style.downsample_rate' must be an integer"]),
        ("coco_rate", ["load-coco", broken_json(acfg, "coco_rate", coco(
            "coco_style", lambda c: c.update(downsample_rate=6))), "coco_style", pr],
         ["amphion_config.json", "'model.coco_style.downsample_rate' = 6 is not a power of two"]),
        ("coco_type", ["load-coco", broken_json(acfg, "coco_type", coco(
            "coco_style", lambda c: c.update(coco_type="content"))), "coco_style", pr],
         ["amphion_config.json", "'model.coco_style.coco_type' is 'content'"]),
        ("coco_normed", ["load-coco", broken_json(acfg, "coco_normed", coco(
            "coco_content_style", lambda c: c.update(use_normed_whisper="yes"))), "coco_content_style", cs],
         ["amphion_config.json", "'model.coco_content_style.use_normed_whisper' must be true or false"]),
        ("coco_no_key", ["load-coco", acfg, "coco_content", cs], ["amphion_config.json", "missing key 'model.coco_content'"]),
    ]


BAD = ["voc_missing", "voc_shape", "voc_window", "voc_no_dim", "voc_type", "voc_dims", "voc_padding", "voc_mel_var",
       "voc_no_file", "coco_zero_norm", "coco_missing", "coco_down", "coco_codebook", "coco_no_layers",
       "coco_rate_type", "coco_rate", "coco_type", "coco_normed", "coco_no_key"]


@pytest.fixture(scope="module")
def bad(pkgs):
    cases = {name: (args, needles) for name, args, needles in bad_cases(pkgs["F32"])}
    assert list(cases) == BAD
    return cases


@pytest.mark.parametrize("name", BAD)
def test_bad_package(name, bad, vocos):
    """A broken package fails to load (exit 3, no sanitizer report) with a message naming the file and the problem."""
    args, needles = bad[name]
    p = subprocess.run([vocos, *args], capture_output=True, text=True)
    msg = p.stdout.strip()
    clean = "Sanitizer" not in p.stderr and "runtime error" not in p.stderr
    assert p.returncode == 3 and clean and all(n in msg for n in needles), \
        f"bad input {name}: exit {p.returncode}, {msg!r}, stderr {p.stderr[-500:]!r}"


def test_short_clip(pkgs, vocos):
    """A clip no longer than the reflect padding is refused."""
    vcfg = os.path.join(pkgs["F32"], "vocoder", "config.json")
    short = raw(os.path.join(WORK, "short.f32"), np.zeros(720, np.float32))
    p = subprocess.run([vocos, "mel", vcfg, short, "720", os.path.join(WORK, "short.mel")], capture_output=True,
                       text=True)
    assert p.returncode == 1 and "720 samples; more than 720 are needed" in p.stderr, \
        f"a 720-sample timbre clip: exit {p.returncode}, {p.stderr.strip()!r}"


def test_decoder_tensors_present(pkgs):
    """The tiny content-style file has its decoder-side tensors (which the loader ignores)."""
    t = st_io.load(os.path.join(pkgs["F32"], coco_ref.FILES["coco_content_style"]))
    assert any(k.startswith("decoder.") for k in t) and "whisper_output_layer.weight" in t, \
        "the tiny content-style file lacks its decoder-side tensors"
