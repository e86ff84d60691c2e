#!/usr/bin/python3
"""The Whisper encoder front end of Vevo2 in PyTorch (spec vevo2.md §4.1
steps 2-5), written from the spec and openai-whisper's model (no whisper
package), and the tiny checkpoints in the three forms users have (§2.0).

  log_mel(audio)                16 kHz audio -> [n_mels][2*n_ctx], the 30 s window
  encode(state, dims, mel)      OpenAI-named f32 state -> [n_ctx][d]
  features(enc, T, mean, std)   first T frames (last repeated), normalized
  load_state(path)              any of the three forms -> (OpenAI-named f32 state, dims)
  write_tiny(root, seed, dtype="F32", dims=None, forms=FORMS)

write_tiny writes under ROOT:
  whisper-medium/medium.pt              torch.save {"dims", "model_state_dict"}, F16 as OpenAI's
  whisper-medium/{config.json, model.safetensors}   the C++ port's form: OpenAI names, {"audio_encoder": dims}
  openai/whisper-medium/{config.json, model.safetensors}   Hugging Face's WhisperModel names and config
  acoustic_modeling/fm_emilia101k_singnet7k_repa/whisper_stats.{pt,safetensors}   mean, std [d]
The safetensors forms are in DTYPE (F32/F16/BF16); all carry a few decoder
tensors, which a loader must ignore.

  whisper_ref.py ROOT [SEED]    writes the tiny files (spec §7.2 dims)
"""
import collections
import json
import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "hviske_asr"))
from cohere_ref import slaney_mel  # noqa: E402  (numpy port of librosa filters.mel)
import st_io  # noqa: E402

RATE, N_FFT, HOP = 16000, 400, 160
FORMS = ("openai", "port", "hf", "hf_bin")
TINY_DIMS = {"n_mels": 80, "n_vocab": 96, "n_audio_ctx": 1500, "n_audio_state": 64, "n_audio_head": 4,
             "n_audio_layer": 2, "n_text_ctx": 16, "n_text_state": 32, "n_text_head": 4, "n_text_layer": 1}
STATS_DIR = "acoustic_modeling/fm_emilia101k_singnet7k_repa"

# OpenAI name -> Hugging Face name (after "encoder." / "model.encoder.")
HF_GLOBAL = {"conv1.weight": "conv1.weight", "conv1.bias": "conv1.bias", "conv2.weight": "conv2.weight",
             "conv2.bias": "conv2.bias", "positional_embedding": "embed_positions.weight",
             "ln_post.weight": "layer_norm.weight", "ln_post.bias": "layer_norm.bias"}
HF_BLOCK = {"attn_ln": "self_attn_layer_norm", "attn.query": "self_attn.q_proj", "attn.key": "self_attn.k_proj",
            "attn.value": "self_attn.v_proj", "attn.out": "self_attn.out_proj", "mlp_ln": "final_layer_norm",
            "mlp.0": "fc1", "mlp.2": "fc2"}
OA_GLOBAL = {v: k for k, v in HF_GLOBAL.items()}
OA_BLOCK = {v: k for k, v in HF_BLOCK.items()}


# ---- front end ---------------------------------------------------------------------
def log_mel(audio, n_mels=80, n_ctx=1500, dtype=torch.float32):
    """openai-whisper's log_mel_spectrogram of the audio padded or cut to the window (float32 as
    whisper computes it; float64 gives the exact value of the same formula)."""
    n = 2 * n_ctx * HOP
    x = np.zeros(n, np.float32)
    a = np.asarray(audio, np.float32)[:n]
    x[:len(a)] = a
    window = torch.hann_window(N_FFT, periodic=True, dtype=dtype)
    stft = torch.stft(torch.from_numpy(x).to(dtype), N_FFT, HOP, window=window, center=True, pad_mode="reflect",
                      return_complex=True)
    power = stft[..., :-1].abs() ** 2
    filters = torch.from_numpy(slaney_mel(n_mels, N_FFT, RATE, 0.0, RATE / 2).astype(np.float32)).to(dtype)
    spec = torch.clamp(filters @ power, min=1e-10).log10()
    spec = torch.maximum(spec, spec.max() - 8.0)
    return ((spec + 4.0) / 4.0).numpy()


# ---- encoder -------------------------------------------------------------------------
def encode(state, dims, mel, stages=None):
    """OpenAI's AudioEncoder.forward in float32 over STATE (OpenAI names, numpy);
    STAGES, a dict if given, receives "conv" and "layer<i>" as the C trace names them."""
    t = {k: torch.from_numpy(np.asarray(v, np.float32)) for k, v in state.items() if k.startswith("encoder.")}
    g = lambda name: t["encoder." + name]  # noqa: E731
    d, H = dims["n_audio_state"], dims["n_audio_head"]
    dh = d // H
    x = torch.from_numpy(np.asarray(mel, np.float32))[None]
    x = F.gelu(F.conv1d(x, g("conv1.weight"), g("conv1.bias"), padding=1))
    x = F.gelu(F.conv1d(x, g("conv2.weight"), g("conv2.bias"), stride=2, padding=1))
    x = x.permute(0, 2, 1) + g("positional_embedding")
    T = x.shape[1]
    keep = (lambda name: stages.__setitem__(name, x[0].numpy().copy())) if stages is not None else (lambda name: None)
    keep("conv")
    scale = dh ** -0.25
    for i in range(dims["n_audio_layer"]):
        b = lambda name: g(f"blocks.{i}.{name}")  # noqa: E731
        h = F.layer_norm(x, (d,), b("attn_ln.weight"), b("attn_ln.bias"), 1e-5)
        q = F.linear(h, b("attn.query.weight"), b("attn.query.bias")).view(1, T, H, dh).permute(0, 2, 1, 3)
        k = F.linear(h, b("attn.key.weight")).view(1, T, H, dh).permute(0, 2, 3, 1)
        v = F.linear(h, b("attn.value.weight"), b("attn.value.bias")).view(1, T, H, dh).permute(0, 2, 1, 3)
        w = torch.softmax((q * scale) @ (k * scale), dim=-1)
        o = (w @ v).permute(0, 2, 1, 3).flatten(start_dim=2)
        x = x + F.linear(o, b("attn.out.weight"), b("attn.out.bias"))
        h = F.layer_norm(x, (d,), b("mlp_ln.weight"), b("mlp_ln.bias"), 1e-5)
        x = x + F.linear(F.gelu(F.linear(h, b("mlp.0.weight"), b("mlp.0.bias"))), b("mlp.2.weight"), b("mlp.2.bias"))
        keep(f"layer{i}")
    x = F.layer_norm(x, (d,), g("ln_post.weight"), g("ln_post.bias"), 1e-5)
    return x[0].numpy()


def features(enc, T, mean=None, std=None):
    """Vevo2's use (§4.1 step 5): the first T frames, the last repeated past n_ctx, then normalized."""
    idx = np.minimum(np.arange(T), enc.shape[0] - 1)
    f = enc[idx]
    if mean is not None:
        f = (f - mean) / std
    return f.astype(np.float32)


def sinusoids(length, channels, max_timescale=10000):
    """OpenAI's positional table: sin over the first half of the channels, cos over the second."""
    inc = math.log(max_timescale) / (channels // 2 - 1)
    inv = torch.exp(-inc * torch.arange(channels // 2))
    scaled = torch.arange(length)[:, None] * inv[None, :]
    return torch.cat([torch.sin(scaled), torch.cos(scaled)], dim=1).numpy().astype(np.float32)


# ---- the three forms -----------------------------------------------------------------
def _encoder_name(rest, glob, block, blocks):
    """An encoder name below its prefix in the other layout: GLOB and BLOCK map the names, BLOCKS is
    the word before the block index."""
    if rest in glob:
        return glob[rest]
    _, i, tail = rest.split(".", 2)
    module, param = tail.rsplit(".", 1)
    return f"{blocks}.{i}.{block[module]}.{param}"


def to_hf(name):
    """An OpenAI name as Hugging Face's WhisperModel names it (decoder names only get the prefix)."""
    if not name.startswith("encoder."):
        return "model." + name
    return "model.encoder." + _encoder_name(name[len("encoder."):], HF_GLOBAL, HF_BLOCK, "layers")


def from_hf(name):
    """to_hf reversed."""
    rest = name[len("model."):]
    if not rest.startswith("encoder."):
        return rest
    return "encoder." + _encoder_name(rest[len("encoder."):], OA_GLOBAL, OA_BLOCK, "blocks")


def hf_config(dims):
    d = dims["n_audio_state"]
    return {"model_type": "whisper", "architectures": ["WhisperForConditionalGeneration"], "d_model": d,
            "encoder_layers": dims["n_audio_layer"], "encoder_attention_heads": dims["n_audio_head"],
            "encoder_ffn_dim": 4 * d, "num_mel_bins": dims["n_mels"], "max_source_positions": dims["n_audio_ctx"],
            "decoder_layers": dims["n_text_layer"], "decoder_attention_heads": dims["n_text_head"],
            "decoder_ffn_dim": 4 * dims["n_text_state"], "vocab_size": dims["n_vocab"],
            "max_target_positions": dims["n_text_ctx"], "activation_function": "gelu", "torch_dtype": "float32"}


def load_state(path):
    """(OpenAI-named float32 numpy state, dims) of a .pt file, a folder of either safetensors form or
    a folder holding one .pt file."""
    bin_path = os.path.join(path, "pytorch_model.bin")
    if os.path.isdir(path) and os.path.exists(bin_path) and not os.path.exists(os.path.join(path, "model.safetensors")):
        with open(os.path.join(path, "config.json")) as f:
            cfg = json.load(f)
        t = {k: v.float().numpy() for k, v in torch.load(bin_path, map_location="cpu").items()}
        return {from_hf(k): v for k, v in t.items()}, hf_dims(cfg)
    if os.path.isdir(path) and not os.path.exists(os.path.join(path, "model.safetensors")):
        (pt,) = [f for f in os.listdir(path) if f.endswith(".pt")]
        path = os.path.join(path, pt)
    if path.endswith(".pt"):
        ck = torch.load(path, map_location="cpu")
        return {k: v.float().numpy() for k, v in ck["model_state_dict"].items()}, dict(ck["dims"])
    with open(os.path.join(path, "config.json")) as f:
        cfg = json.load(f)
    t = st_io.load(os.path.join(path, "model.safetensors"))
    if "audio_encoder" in cfg:
        return {k: v.astype(np.float32) for k, v in t.items()}, cfg["audio_encoder"]
    return {from_hf(k): v.astype(np.float32) for k, v in t.items()}, hf_dims(cfg)


def hf_dims(cfg):
    """The OpenAI dims of a Hugging Face WhisperConfig."""
    return {"n_mels": cfg["num_mel_bins"], "n_audio_ctx": cfg["max_source_positions"], "n_audio_state": cfg["d_model"],
            "n_audio_head": cfg["encoder_attention_heads"], "n_audio_layer": cfg["encoder_layers"]}


def make_state(rng, dims):
    """OpenAI-named float32 weights initialised as spec §7.2, with a few decoder tensors."""
    d, L, M, ctx = dims["n_audio_state"], dims["n_audio_layer"], dims["n_mels"], dims["n_audio_ctx"]
    s = collections.OrderedDict()

    def lin(name, out, fan_in, shape=None, bias=True):
        s[name + ".weight"] = (rng.standard_normal(shape or (out, fan_in), dtype=np.float32) / np.sqrt(fan_in)).astype(np.float32)
        if bias:
            s[name + ".bias"] = (0.01 * rng.standard_normal(out, dtype=np.float32)).astype(np.float32)

    def ln(name, n):
        s[name + ".weight"] = (1 + 0.05 * rng.standard_normal(n, dtype=np.float32)).astype(np.float32)
        s[name + ".bias"] = (0.01 * rng.standard_normal(n, dtype=np.float32)).astype(np.float32)

    lin("encoder.conv1", d, 3 * M, (d, M, 3))
    lin("encoder.conv2", d, 3 * d, (d, d, 3))
    s["encoder.positional_embedding"] = sinusoids(ctx, d)
    for i in range(L):
        p = f"encoder.blocks.{i}."
        ln(p + "attn_ln", d)
        lin(p + "attn.query", d, d)
        lin(p + "attn.key", d, d, bias=False)
        lin(p + "attn.value", d, d)
        lin(p + "attn.out", d, d)
        ln(p + "mlp_ln", d)
        lin(p + "mlp.0", 4 * d, d)
        lin(p + "mlp.2", d, 4 * d)
    ln("encoder.ln_post", d)
    td = dims["n_text_state"]
    s["decoder.token_embedding.weight"] = rng.standard_normal((dims["n_vocab"], td), dtype=np.float32)
    s["decoder.positional_embedding"] = rng.standard_normal((dims["n_text_ctx"], td), dtype=np.float32)
    lin("decoder.blocks.0.cross_attn.query", td, td)
    ln("decoder.ln", td)
    return s


def write_safetensors(path, state, dtype, name=lambda k: k):
    cast = {"F32": lambda a: a, "F16": lambda a: a.astype(np.float16), "BF16": lambda a: ("BF16", a)}[dtype]
    st_io.save(path, {name(k): cast(v) for k, v in state.items()})


def write_tiny(root, seed, dtype="F32", dims=None, forms=FORMS):
    """The encoder in FORMS and the stats in both forms under ROOT; returns the dims."""
    dims = dict(TINY_DIMS, **(dims or {}))
    rng = np.random.default_rng(seed)
    state = make_state(rng, dims)
    d = dims["n_audio_state"]
    wm = os.path.join(root, "whisper-medium")
    os.makedirs(wm, exist_ok=True)
    if "openai" in forms:
        sd = collections.OrderedDict((k, torch.from_numpy(v).half()) for k, v in state.items())
        torch.save({"dims": dims, "model_state_dict": sd}, os.path.join(wm, "medium.pt"))
    if "port" in forms:
        write_safetensors(os.path.join(wm, "model.safetensors"), state, dtype)
        audio = {k: dims[k] for k in ("n_mels", "n_audio_ctx", "n_audio_state", "n_audio_head", "n_audio_layer")}
        with open(os.path.join(wm, "config.json"), "w") as f:
            json.dump({"audio_encoder": audio}, f, indent=1)
    if "hf" in forms:
        hf = os.path.join(root, "openai", "whisper-medium")
        os.makedirs(hf, exist_ok=True)
        write_safetensors(os.path.join(hf, "model.safetensors"), state, dtype, to_hf)
        with open(os.path.join(hf, "config.json"), "w") as f:
            json.dump(hf_config(dims), f, indent=1)
    if "hf_bin" in forms:  # a Hugging Face folder with only pytorch_model.bin (a torch.save zip of the state dict)
        hb = os.path.join(root, "openai", "whisper-medium-bin")
        os.makedirs(hb, exist_ok=True)
        sd = collections.OrderedDict((to_hf(k), torch.from_numpy(v)) for k, v in state.items())
        torch.save(sd, os.path.join(hb, "pytorch_model.bin"))
        with open(os.path.join(hb, "config.json"), "w") as f:
            json.dump(hf_config(dims), f, indent=1)
    sdir = os.path.join(root, STATS_DIR)
    os.makedirs(sdir, exist_ok=True)
    mean = (0.1 * rng.standard_normal(d)).astype(np.float32)
    std = rng.uniform(0.5, 1.5, d).astype(np.float32)
    torch.save({"mean": torch.from_numpy(mean), "std": torch.from_numpy(std)}, os.path.join(sdir, "whisper_stats.pt"))
    st_io.save(os.path.join(sdir, "whisper_stats.safetensors"), {"mean": mean, "std": std})
    return dims


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__.strip())
    write_tiny(sys.argv[1], int(sys.argv[2]) if len(sys.argv) == 3 else 0)
