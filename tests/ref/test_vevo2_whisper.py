#!/usr/bin/python3
"""Parity of the Whisper encoder module (src/models/whisper) with the
PyTorch reference tests/ref/vevo2/whisper_ref.py, on tiny random encoders
(spec vevo2.md §7.2) in the three forms of §2.0: OpenAI's medium.pt (F16),
the C++ port's folder (OpenAI names, {"audio_encoder": dims}) and a Hugging
Face folder; F32, F16 and BF16 safetensors. Inputs: espeak-ng speech at
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
Environment: VEVO2_WHISPER, TEST_WORK.
"""
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import scipy.io.wavfile
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "vevo2"))
sys.path.insert(0, os.path.join(HERE, "hviske_asr"))
import st_io  # noqa: E402
import whisper_ref  # noqa: E402
from checker import Checker  # noqa: E402

DRIVER = os.environ["VEVO2_WHISPER"]
WORK = os.path.join(os.environ["TEST_WORK"], "vevo2_whisper")
PY = "/usr/bin/python3"
SEED = 7
MEL_TOL, ENC_TOL = 5e-5, 1e-4
check = Checker()


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True)


def clips():
    """(name, f32 path, samples) of a short and a long (> 30 s) 16 kHz clip."""
    speech = os.path.join(WORK, "speech")
    p = run([PY, os.path.join(HERE, "make_speech.py"), speech])
    if p.returncode != 0:
        raise SystemExit(f"make_speech failed\n{p.stderr[-2000:]}")
    with open(os.path.join(speech, "manifest.json")) as f:
        mono16 = [os.path.join(speech, c["file"]) for c in json.load(f)["clips"] if "16k_mono" in c["file"]]
    long_wav = os.path.join(speech, "long_16k.wav")
    subprocess.run(["sox"] + mono16 * 2 + [long_wav], check=True)
    out = []
    for name, wav in (("short", mono16[0]), ("long", long_wav)):
        rate, x = scipy.io.wavfile.read(wav)
        assert rate == 16000 and x.ndim == 1, (wav, rate, x.shape)
        x = (x.astype(np.float32) / 32768.0).astype(np.float32)
        path = os.path.join(WORK, name + ".f32")
        x.tofile(path)
        out.append((name, path, x))
    return out


def rel(got, want):
    return float(np.max(np.abs(got.astype(np.float64) - want)) / max(np.max(np.abs(want)), 1e-30))


def parity(label, model, stats, clip, ref_cache):
    name, path, x = clip
    state, dims = whisper_ref.load_state(model)
    key = (label, name)
    mel_ref = whisper_ref.log_mel(x, dims["n_mels"], dims["n_audio_ctx"])
    mel_exact = whisper_ref.log_mel(x, dims["n_mels"], dims["n_audio_ctx"], torch.float64)
    enc_ref = whisper_ref.encode(state, dims, mel_ref)
    ck = torch.load(os.path.join(os.path.dirname(stats), "whisper_stats.pt"))
    T = len(x) // 320  # Vevo2's 50 Hz frames: 24 kHz samples / 480
    feat_ref = whisper_ref.features(enc_ref, T, ck["mean"].numpy(), ck["std"].numpy())
    prefix = os.path.join(WORK, f"c_{label}_{name}_")
    p = run([DRIVER, "run", model, stats, path, str(T), prefix])
    sys.stderr.write(p.stderr)
    if not check(p.returncode == 0, f"{label} {name}: driver failed ({p.returncode})"):
        return None
    load = lambda s, shape: np.fromfile(prefix + s + ".f32", dtype="<f4").reshape(shape)  # noqa: E731
    mel = load("mel", (2 * dims["n_audio_ctx"], dims["n_mels"]))
    enc = load("enc", enc_ref.shape)
    feat = load("feat", feat_ref.shape)
    e_mel = float(np.max(np.abs(mel.astype(np.float64) - mel_exact.T)))
    e_torch = float(np.max(np.abs(mel_ref.astype(np.float64) - mel_exact)))
    e_enc, e_feat = rel(enc, enc_ref), rel(feat, feat_ref)
    check(e_mel <= MEL_TOL, f"{label} {name}: log-mel differs by {e_mel:.3g} > {MEL_TOL}")
    check(e_enc <= ENC_TOL, f"{label} {name}: encoder output differs by {e_enc:.3g} (relative) > {ENC_TOL}")
    check(e_feat <= ENC_TOL, f"{label} {name}: features differ by {e_feat:.3g} (relative) > {ENC_TOL}")
    print(f"  {label:24s} {name:5s} T {T:4d}  log-mel {e_mel:.2e} (torch f32 {e_torch:.2e})  encoder {e_enc:.2e}"
          f"  features {e_feat:.2e}")
    ref_cache[key] = enc
    return enc


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


def loads(tiny, tiny16):
    """What the loader makes of each path: the dims, the names, the tensors it copied out. Every
    matrix and conv kernel is used in place: only the encoder's vectors of 16-bit files are widened
    (5 + 9 per block); a decoder tensor touched would add to the count."""
    L = whisper_ref.TINY_DIMS["n_audio_layer"]
    dims = "n_mels 80 n_ctx 1500 d 64 heads 4 layers 2 ffn 256"
    cases = [
        (os.path.join(tiny, "whisper-medium", "medium.pt"), f"{dims} names openai converted {5 + 9 * L}"),
        (os.path.join(tiny, "whisper-medium"), f"{dims} names openai converted 0"),
        (os.path.join(tiny, "whisper-medium", "model.safetensors"), f"{dims} names openai converted 0"),
        (os.path.join(tiny, "openai", "whisper-medium"), f"{dims} names hf converted 0"),
        (os.path.join(tiny16, "openai", "whisper-medium"), f"{dims} names hf converted {5 + 9 * L}"),
    ]
    for path, want in cases:
        p = run([DRIVER, "--load", path])
        got = p.stdout.strip()
        check(p.returncode == 0 and got == want, f"load {path}: exit {p.returncode}, {got!r}, expected {want!r}")
    print(f"  loads: {len(cases)} paths give their dims; decoder tensors untouched")


def bad_inputs(tiny):
    port = os.path.join(tiny, "whisper-medium")
    hf = os.path.join(tiny, "openai", "whisper-medium")
    pt = os.path.join(port, "medium.pt")
    with open(os.path.join(port, "config.json")) as f:
        port_cfg = json.load(f)
    with open(os.path.join(hf, "config.json")) as f:
        hf_cfg = json.load(f)
    no_layers = {"audio_encoder": {k: v for k, v in port_cfg["audio_encoder"].items() if k != "n_audio_layer"}}
    bad = os.path.join(WORK, "bad_files")
    os.makedirs(bad, exist_ok=True)
    with open(pt, "rb") as f:
        blob = f.read()
    truncated = os.path.join(bad, "truncated.pt")
    with open(truncated, "wb") as f:
        f.write(blob[:len(blob) // 2])
    ck = torch.load(pt)
    no_dims = os.path.join(bad, "no_dims.pt")
    torch.save({"model_state_dict": ck["model_state_dict"]}, no_dims)
    odd_heads = os.path.join(bad, "odd_heads.pt")
    torch.save({"dims": dict(ck["dims"], n_audio_head=5), "model_state_dict": ck["model_state_dict"]}, odd_heads)
    empty = os.path.join(bad, "empty_folder")
    os.makedirs(empty, exist_ok=True)
    cases = [
        ("missing tensor", broken_folder("missing", port, drop="encoder.blocks.1.mlp.2.bias"),
         ["model.safetensors", "missing tensor 'encoder.blocks.1.mlp.2.bias'"]),
        ("mis-shaped tensor", broken_folder("shape", hf, cut="model.encoder.layers.0.self_attn.k_proj.weight"),
         ["model.safetensors", "'model.encoder.layers.0.self_attn.k_proj.weight'", "shape [63, 64]",
          "expected [64, 64]"]),
        ("mis-shaped conv", broken_folder("conv", port, cut="encoder.conv2.weight"),
         ["model.safetensors", "'encoder.conv2.weight'", "shape [63, 64, 3]", "expected [64, 64, 3]"]),
        ("truncated .pt", truncated, ["truncated.pt", "truncated"]),
        ("no dims in .pt", no_dims, ["no_dims.pt", "missing key 'dims'"]),
        ("heads in .pt", odd_heads, ["odd_heads.pt", "'dims.n_audio_head' = 5 heads do not divide the width 64"]),
        ("dims key missing", broken_folder("no_layers", port, config=no_layers),
         ["config.json", "missing key 'audio_encoder.n_audio_layer'"]),
        ("HF key missing", broken_folder("hf_no_layers", hf, config={k: v for k, v in hf_cfg.items()
                                                                     if k != "encoder_layers"}),
         ["config.json", "missing key 'encoder_layers'"]),
        ("dims key wrong type", broken_folder("hf_type", hf, config=dict(hf_cfg, d_model="64")),
         ["config.json", "key 'd_model' must be an integer"]),
        ("no dims at all", broken_folder("no_dims", port, config={"model": {}}),
         ["config.json", "neither 'audio_encoder'"]),
        ("empty folder", empty, ["empty_folder", "no model.safetensors and no .pt file"]),
        ("no such path", os.path.join(bad, "nowhere"), ["nowhere", "cannot open"]),
    ]
    for what, path, needles in cases:
        p = run([DRIVER, "--load", path])
        msg = p.stdout.strip()
        check(p.returncode == 3 and all(n in msg for n in needles), f"bad input {what}: exit {p.returncode}, {msg!r}")
        print(f"  bad {what:20s} {msg}")

    sdir = os.path.join(tiny, whisper_ref.STATS_DIR)
    st = st_io.load(os.path.join(sdir, "whisper_stats.safetensors"))
    no_std = os.path.join(bad, "whisper_stats.safetensors")
    st_io.save(no_std, {"mean": st["mean"]})
    zero_std = os.path.join(bad, "zero_std.pt")
    torch.save({"mean": torch.from_numpy(st["mean"]), "std": torch.zeros(64)}, zero_std)
    stats_cases = [
        ("stats without std", no_std, 64, ["whisper_stats.safetensors", "missing tensor 'std'"]),
        ("stats of another width", os.path.join(sdir, "whisper_stats.pt"), 32,
         ["whisper_stats.pt", "tensor 'mean' has shape [64], expected [32]"]),
        ("stats with std 0", zero_std, 64, ["zero_std.pt", "std must be finite and non-zero"]),
    ]
    for what, path, dim, needles in stats_cases:
        p = run([DRIVER, "--stats", path, str(dim)])
        msg = p.stdout.strip()
        check(p.returncode == 3 and all(n in msg for n in needles), f"bad input {what}: exit {p.returncode}, {msg!r}")
        print(f"  bad {what:20s} {msg}")


def main():
    os.makedirs(WORK, exist_ok=True)
    tiny, tiny16, tinybf = (os.path.join(WORK, n) for n in ("tiny", "tiny_f16", "tiny_bf16"))
    whisper_ref.write_tiny(tiny, SEED)
    whisper_ref.write_tiny(tiny16, SEED, "F16", forms=("hf",))
    whisper_ref.write_tiny(tinybf, SEED, "BF16", forms=("port",))
    # a folder holding only OpenAI's file
    only_pt = os.path.join(WORK, "only_pt")
    os.makedirs(only_pt, exist_ok=True)
    shutil.copy(os.path.join(tiny, "whisper-medium", "medium.pt"), only_pt)
    stats_pt = os.path.join(tiny, whisper_ref.STATS_DIR, "whisper_stats.pt")
    stats_st = os.path.join(tiny, whisper_ref.STATS_DIR, "whisper_stats.safetensors")
    forms = [
        ("medium.pt (F16)", os.path.join(tiny, "whisper-medium", "medium.pt"), stats_pt),
        ("folder with a .pt (F16)", only_pt, stats_st),
        ("port folder F32", os.path.join(tiny, "whisper-medium"), stats_st),
        ("HF folder F32", os.path.join(tiny, "openai", "whisper-medium"), stats_pt),
        ("HF folder F16", os.path.join(tiny16, "openai", "whisper-medium"), stats_st),
        ("port folder BF16", os.path.join(tinybf, "whisper-medium"), stats_pt),
    ]
    print("test_vevo2_whisper: tolerances log-mel %g (absolute), encoder/features %g (relative)" % (MEL_TOL, ENC_TOL))
    outs = {}
    for clip in clips():
        for label, model, stats in forms:
            parity(label, model, stats, clip, outs)
        # the same weights in different forms: the same numbers
        for a, b in (("medium.pt (F16)", "folder with a .pt (F16)"), ("port folder F32", "HF folder F32")):
            ea, eb = outs.get((a, clip[0])), outs.get((b, clip[0]))
            check(ea is not None and eb is not None and np.array_equal(ea, eb),
                  f"{clip[0]}: {a} and {b} give different outputs")
    loads(tiny, tiny16)
    bad_inputs(tiny)
    return check.finish()


if __name__ == "__main__":
    sys.exit(main())
