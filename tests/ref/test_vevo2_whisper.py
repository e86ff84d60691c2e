"""Parity of the Whisper encoder module (src/models/whisper) with the
PyTorch reference tests/ref/vevo2/whisper_ref.py, on tiny random encoders
(spec vevo2.md §7.2) in the three forms of §2.0: OpenAI's medium.pt (F16),
the C++ port's folder (OpenAI names, {"audio_encoder": dims}) and a Hugging
Face folder (model.safetensors, or only pytorch_model.bin); F32, F16 and
BF16 safetensors. Inputs: espeak-ng speech at
16 kHz, one clip shorter than the 30 s window and one longer (cut, and
more than 1500 feature frames asked: the last frame repeats).

Per form and clip: the log-mel within 5e-5 (absolute; values are O(1)) of
the exact value of the formula (float64): float32 STFTs of speech are off
by that much in quiet bins 7 decades below the peak (torch's float32 by
2.4e-5, ours by 3.4e-5), which change the encoder output by < 1e-6;
the encoder output and the normalized features within 1e-4 of the largest
reference value, the reference run on the weights as stored (F16/BF16
rounded); the same weights in two forms give identical outputs; 1 and 2
threads agree within 1e-5 (the driver checks). Then the bad
inputs: each refused with a message naming the file and the tensor or key.
"""
import functools
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
import scipy.io.wavfile

import testenv

torch = pytest.importorskip("torch")

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "vevo2"))
sys.path.insert(0, os.path.join(HERE, "hviske_asr"))
import st_io  # noqa: E402
import whisper_ref  # noqa: E402

WORK = testenv.work("vevo2_whisper")
SEED = 7
MEL_TOL, ENC_TOL = 5e-5, 1e-4
CLIPS = ["short", "long"]
# label: (folder under WORK, path in it, stats file format)
FORMS = {
    "medium.pt (F16)": ("tiny", "whisper-medium/medium.pt", "pt"),
    "folder with a .pt (F16)": ("only_pt", "", "safetensors"),
    "port folder F32": ("tiny", "whisper-medium", "safetensors"),
    "HF folder F32": ("tiny", "openai/whisper-medium", "pt"),
    "HF folder pytorch_model.bin F32": ("tiny", "openai/whisper-medium-bin", "pt"),
    "HF folder F16": ("tiny_f16", "openai/whisper-medium", "safetensors"),
    "port folder BF16": ("tiny_bf16", "whisper-medium", "pt"),
}
SAME_WEIGHTS = [("medium.pt (F16)", "folder with a .pt (F16)"), ("port folder F32", "HF folder F32"),
                ("HF folder F32", "HF folder pytorch_model.bin F32")]


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True)


@pytest.fixture(scope="module")
def whisper(driver):
    return driver("test_vevo2_whisper")


@pytest.fixture(scope="module")
def tiny():
    """The tiny encoders (F32 in every form, F16 HF, BF16 port) and a folder holding only OpenAI's file."""
    tiny = os.path.join(WORK, "tiny")
    whisper_ref.write_tiny(tiny, SEED)
    whisper_ref.write_tiny(os.path.join(WORK, "tiny_f16"), SEED, "F16", forms=("hf",))
    whisper_ref.write_tiny(os.path.join(WORK, "tiny_bf16"), SEED, "BF16", forms=("port",))
    only_pt = os.path.join(WORK, "only_pt")
    os.makedirs(only_pt, exist_ok=True)
    shutil.copy(os.path.join(tiny, "whisper-medium", "medium.pt"), only_pt)
    return tiny


@pytest.fixture(scope="module")
def clips():
    """name -> (f32 path, samples) of a short and a long (> 30 s) 16 kHz clip."""
    speech = os.path.join(WORK, "speech")
    p = run([testenv.PY, os.path.join(HERE, "make_speech.py"), speech])
    assert p.returncode == 0, f"make_speech failed\n{p.stderr[-2000:]}"
    with open(os.path.join(speech, "manifest.json")) as f:
        mono16 = [os.path.join(speech, c["file"]) for c in json.load(f)["clips"] if "16k_mono" in c["file"]]
    long_wav = os.path.join(speech, "long_16k.wav")
    subprocess.run(["sox"] + mono16 * 2 + [long_wav], check=True)
    out = {}
    for name, wav in (("short", mono16[0]), ("long", long_wav)):
        rate, x = scipy.io.wavfile.read(wav)
        assert rate == 16000 and x.ndim == 1, (wav, rate, x.shape)
        x = (x.astype(np.float32) / 32768.0).astype(np.float32)
        path = os.path.join(WORK, name + ".f32")
        x.tofile(path)
        out[name] = path, x
    return out


def rel(got, want):
    return float(np.max(np.abs(got.astype(np.float64) - want)) / max(np.max(np.abs(want)), 1e-30))


@pytest.fixture(scope="module")
def encoded(tiny, clips, whisper):
    """(label, clip) -> the driver's log-mel, encoder output and features beside the
    reference's, computed once; the driver's run asserted to succeed."""
    @functools.cache
    def get(label, name):
        folder, sub, stats_kind = FORMS[label]
        model = os.path.join(WORK, folder, sub) if sub else os.path.join(WORK, folder)
        stats = os.path.join(tiny, whisper_ref.STATS_DIR, "whisper_stats." + stats_kind)
        path, x = clips[name]
        state, dims = whisper_ref.load_state(model)
        mel_ref = whisper_ref.log_mel(x, dims["n_mels"], dims["n_audio_ctx"])
        mel_exact = whisper_ref.log_mel(x, dims["n_mels"], dims["n_audio_ctx"], torch.float64)
        stages_ref = {}
        enc_ref = whisper_ref.encode(state, dims, mel_ref, stages_ref)
        ck = torch.load(os.path.join(tiny, whisper_ref.STATS_DIR, "whisper_stats.pt"))
        T = len(x) // 320  # Vevo2's 50 Hz frames: 24 kHz samples / 480
        feat_ref = whisper_ref.features(enc_ref, T, ck["mean"].numpy(), ck["std"].numpy())
        prefix = os.path.join(WORK, f"c_{label}_{name}_")
        p = run([whisper, "run", model, stats, path, str(T), prefix])
        sys.stderr.write(p.stderr)
        assert p.returncode == 0, f"{label} {name}: driver failed ({p.returncode})"
        load = lambda s, shape: np.fromfile(prefix + s + ".f32", dtype="<f4").reshape(shape)  # noqa: E731
        return dict(mel=load("mel", (2 * dims["n_audio_ctx"], dims["n_mels"])), mel_exact=mel_exact,
                    mel_ref=mel_ref, enc=load("enc", enc_ref.shape), enc_ref=enc_ref,
                    feat=load("feat", feat_ref.shape), feat_ref=feat_ref,
                    stages={s: (load(s, enc_ref.shape), v) for s, v in stages_ref.items()})
    return get


@pytest.mark.parametrize("label", FORMS)
@pytest.mark.parametrize("name", CLIPS)
def test_parity(name, label, encoded):
    """The log-mel within 5e-5 of the exact formula, the encoder output and
    the features within 1e-4 (relative) of the reference's."""
    r = encoded(label, name)
    e_mel = float(np.max(np.abs(r["mel"].astype(np.float64) - r["mel_exact"].T)))
    e_torch = float(np.max(np.abs(r["mel_ref"].astype(np.float64) - r["mel_exact"])))
    e_enc, e_feat = rel(r["enc"], r["enc_ref"]), rel(r["feat"], r["feat_ref"])
    print(f"{label} {name}: log-mel {e_mel:.2e} (torch f32 {e_torch:.2e})  encoder {e_enc:.2e}  features {e_feat:.2e}")
    assert e_mel <= MEL_TOL, f"{label} {name}: log-mel differs by {e_mel:.3g} > {MEL_TOL}"
    assert e_enc <= ENC_TOL, f"{label} {name}: encoder output differs by {e_enc:.3g} (relative) > {ENC_TOL}"
    assert e_feat <= ENC_TOL, f"{label} {name}: features differ by {e_feat:.3g} (relative) > {ENC_TOL}"


@pytest.mark.parametrize("name", CLIPS)
def test_stages(name, encoded):
    """Each stage the encoder hands to the trace hook (the convolutions, then
    every block) within 1e-4 (relative) of the reference's, so a divergence
    is found where it starts."""
    stages = encoded("port folder F32", name)["stages"]
    assert set(stages) == {"conv"} | {f"layer{i}" for i in range(whisper_ref.TINY_DIMS["n_audio_layer"])}
    for s, (got, want) in stages.items():
        e = rel(got, want)
        print(f"{name} {s}: {e:.2e}")
        assert e <= ENC_TOL, f"{name}: stage {s} differs by {e:.3g} (relative) > {ENC_TOL}"


@pytest.mark.parametrize("a,b", SAME_WEIGHTS)
@pytest.mark.parametrize("name", CLIPS)
def test_same_weights(name, a, b, encoded):
    """The same weights in two forms give identical encoder outputs."""
    assert np.array_equal(encoded(a, name)["enc"], encoded(b, name)["enc"]), \
        f"{name}: {a} and {b} give different outputs"


L = whisper_ref.TINY_DIMS["n_audio_layer"]
DIMS = "n_mels 80 n_ctx 1500 d 64 heads 4 layers 2 ffn 256"
LOADS = [
    ("tiny", "whisper-medium/medium.pt", f"{DIMS} names openai converted {5 + 9 * L}"),
    ("tiny", "whisper-medium", f"{DIMS} names openai converted 0"),
    ("tiny", "whisper-medium/model.safetensors", f"{DIMS} names openai converted 0"),
    ("tiny", "openai/whisper-medium", f"{DIMS} names hf converted 0"),
    ("tiny", "openai/whisper-medium-bin", f"{DIMS} names hf converted 0"),
    ("tiny_f16", "openai/whisper-medium", f"{DIMS} names hf converted {5 + 9 * L}"),
]


@pytest.mark.parametrize("folder,sub,want", LOADS)
def test_load(folder, sub, want, tiny, whisper):
    """What the loader makes of a path: the dims, the names, the tensors it copied out. Every
    matrix and conv kernel is used in place: only the encoder's vectors of 16-bit files are
    widened (5 + 9 per block); a decoder tensor touched would add to the count."""
    path = os.path.join(WORK, folder, sub)
    p = run([whisper, "--load", path])
    got = p.stdout.strip()
    assert p.returncode == 0 and got == want, f"load {path}: exit {p.returncode}, {got!r}, expected {want!r}"


def broken_folder(name, base, config=None, drop=None, cut=None):
    """A copy of the safetensors folder BASE with config.json replaced, a tensor dropped or cut by a row."""
    out = os.path.join(WORK, "bad_" + name)
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(base, out)
    if config is not None:
        with open(os.path.join(out, "config.json"), "w") as f:
            json.dump(config, f)
    if drop or cut:
        st_io.edit(os.path.join(base, "model.safetensors"), os.path.join(out, "model.safetensors"), drop, cut)
    return out


def bad_dir():
    bad = os.path.join(WORK, "bad_files")
    os.makedirs(bad, exist_ok=True)
    return bad


def truncated_pt(tiny):
    with open(os.path.join(tiny, "whisper-medium", "medium.pt"), "rb") as f:
        blob = f.read()
    out = os.path.join(bad_dir(), "truncated.pt")
    with open(out, "wb") as f:
        f.write(blob[:len(blob) // 2])
    return out


def pt_with(tiny, name, dims_change):
    """medium.pt saved again as NAME with its dims changed (None: no dims)."""
    ck = torch.load(os.path.join(tiny, "whisper-medium", "medium.pt"))
    out = os.path.join(bad_dir(), name)
    body = {"model_state_dict": ck["model_state_dict"]}
    if dims_change is not None:
        body = {"dims": dict(ck["dims"], **dims_change), **body}
    torch.save(body, out)
    return out


def config(tiny, form):
    sub = "whisper-medium" if form == "port" else "openai/whisper-medium"
    with open(os.path.join(tiny, sub, "config.json")) as f:
        return json.load(f)


def port(tiny):
    return os.path.join(tiny, "whisper-medium")


def hf(tiny):
    return os.path.join(tiny, "openai", "whisper-medium")


def empty_folder(tiny):
    out = os.path.join(bad_dir(), "empty_folder")
    os.makedirs(out, exist_ok=True)
    return out


BAD = [  # what, the broken path made from the tiny folder, what the message names
    ("missing tensor", lambda t: broken_folder("missing", port(t), drop="encoder.blocks.1.mlp.2.bias"),
     ["model.safetensors", "missing tensor 'encoder.blocks.1.mlp.2.bias'"]),
    ("mis-shaped tensor", lambda t: broken_folder("shape", hf(t), cut="model.encoder.layers.0.self_attn.k_proj.weight"),
     ["model.safetensors", "'model.encoder.layers.0.self_attn.k_proj.weight'", "shape [63, 64]",
      "expected [64, 64]"]),
    ("mis-shaped conv", lambda t: broken_folder("conv", port(t), cut="encoder.conv2.weight"),
     ["model.safetensors", "'encoder.conv2.weight'", "shape [63, 64, 3]", "expected [64, 64, 3]"]),
    ("truncated .pt", truncated_pt, ["truncated.pt", "truncated"]),
    ("no dims in .pt", lambda t: pt_with(t, "no_dims.pt", None), ["no_dims.pt", "missing key 'dims'"]),
    ("heads in .pt", lambda t: pt_with(t, "odd_heads.pt", {"n_audio_head": 5}),
     ["odd_heads.pt", "'dims.n_audio_head' = 5 heads do not divide the width 64"]),
    ("dims key missing", lambda t: broken_folder("no_layers", port(t), config={"audio_encoder": {
        k: v for k, v in config(t, "port")["audio_encoder"].items() if k != "n_audio_layer"}}),
     ["config.json", "missing key 'audio_encoder.n_audio_layer'"]),
    ("HF key missing", lambda t: broken_folder("hf_no_layers", hf(t), config={
        k: v for k, v in config(t, "hf").items() if k != "encoder_layers"}),
     ["config.json", "missing key 'encoder_layers'"]),
    ("dims key wrong type", lambda t: broken_folder("hf_type", hf(t), config=dict(config(t, "hf"), d_model="64")),
     ["config.json", "key 'd_model' must be an integer"]),
    ("no dims at all", lambda t: broken_folder("no_dims", port(t), config={"model": {}}),
     ["config.json", "neither 'audio_encoder'"]),
    ("empty folder", empty_folder, ["empty_folder", "no model.safetensors, no pytorch_model.bin and no .pt file"]),
    ("no such path", lambda t: os.path.join(bad_dir(), "nowhere"), ["nowhere", "cannot open"]),
]


@pytest.mark.parametrize("what,make,needles", BAD, ids=[b[0] for b in BAD])
def test_bad_model(what, make, needles, tiny, whisper):
    """A broken model path is refused (exit 3) with a message naming the file and the tensor or key."""
    p = run([whisper, "--load", make(tiny)])
    msg = p.stdout.strip()
    assert p.returncode == 3 and all(n in msg for n in needles), f"bad input {what}: exit {p.returncode}, {msg!r}"


def stats_without_std(tiny):
    st = st_io.load(os.path.join(tiny, whisper_ref.STATS_DIR, "whisper_stats.safetensors"))
    out = os.path.join(bad_dir(), "whisper_stats.safetensors")
    st_io.save(out, {"mean": st["mean"]})
    return out


def stats_zero_std(tiny):
    st = st_io.load(os.path.join(tiny, whisper_ref.STATS_DIR, "whisper_stats.safetensors"))
    out = os.path.join(bad_dir(), "zero_std.pt")
    torch.save({"mean": torch.from_numpy(st["mean"]), "std": torch.zeros(64)}, out)
    return out


BAD_STATS = [
    ("stats without std", stats_without_std, 64, ["whisper_stats.safetensors", "missing tensor 'std'"]),
    ("stats of another width", lambda t: os.path.join(t, whisper_ref.STATS_DIR, "whisper_stats.pt"), 32,
     ["whisper_stats.pt", "tensor 'mean' has shape [64], expected [32]"]),
    ("stats with std 0", stats_zero_std, 64, ["zero_std.pt", "std must be finite and non-zero"]),
]


@pytest.mark.parametrize("what,make,dim,needles", BAD_STATS, ids=[b[0] for b in BAD_STATS])
def test_bad_stats(what, make, dim, needles, tiny, whisper):
    """Broken feature statistics are refused (exit 3) with a message naming the file and the tensor."""
    p = run([whisper, "--stats", make(tiny), str(dim)])
    msg = p.stdout.strip()
    assert p.returncode == 3 and all(n in msg for n in needles), f"bad input {what}: exit {p.returncode}, {msg!r}"
