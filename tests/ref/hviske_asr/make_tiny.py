#!/usr/bin/python3
"""Write a tiny random-weight `cohere_asr` package (spec §7.1), same layout and names as the real one.

usage: make_tiny.py OUTDIR --tokenizer tokenizer.model [--seed 0] [--dtypes f32,f16,bf16]
                    [--no-frontend-tensors] [--eos-bias B]

OUTDIR gets config.json, generation_config.json, tokenizer.model (a copy) and an
F32 model.safetensors. Every other dtype listed in --dtypes gets a sibling package
folder OUTDIR_f16 / OUTDIR_bf16 (same files; every float tensor stored in that
dtype, bf16 rounded to nearest even; num_batches_tracked stays I64).
The same seed gives byte-identical files.
"""
import argparse
import json
import math
import os
import shutil
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import st_io  # noqa: E402
from cohere_ref import Tokenizer, hann_symmetric, slaney_mel  # noqa: E402

# Tiny dimensions (§7.1). The frontend keeps the real 128 mels / 512 FFT / 400 / 160.
E, E_LAYERS, E_HEADS, SUB_C, K = 64, 2, 4, 16, 9
D, D_INNER, D_LAYERS, D_HEADS, P = 48, 96, 2, 4, 128
N_MELS, N_FFT, WIN = 128, 512, 400
# Decoder residual-branch gains (weights N(0, gain^2/fan_in)). With gain 1 everywhere the
# nearly constant cross-attention output and the positive ReLU mean dominate the decoder
# state: greedy decoding locks onto one "attractor" token forever and no EOS bias can make
# it stop after a few tokens. A strong FFN (a random map of the current state) and weak
# attention outputs give varied tokens whose EOS gap fluctuates.
SELF_OUT_GAIN, CROSS_OUT_GAIN, FFN_OUT_GAIN = 0.4, 0.2, 12.0
# +EOS_BIAS on the eos logit (classifier bias): greedy decoding of ~2 s of speech then
# stops after 5-30 tokens (tuned with seed 0 on espeak Danish and LibriSpeech clips).
EOS_BIAS = 25.5


def make_config(vocab):
    """Full nested structure of the real config.json, tiny numbers."""
    return {
        "sample_rate": 16000,
        "use_loss_mask_for_prompt": False,
        "log_prediction": True,
        "log_batch_stats": False,
        "prompt_format": "cohere_asr",
        "prompt_defaults": [
            {"role": "user", "slots": {"decodercontext": "", "source_lang": "<|da|>", "target_lang": "<|da|>",
                                       "emotion": "<|emo:undefined|>", "pnc": "<|pnc|>", "itn": "<|noitn|>",
                                       "diarize": "<|nodiarize|>", "timestamp": "<|notimestamp|>"}},
            {"role": "user_partial", "slots": {"decodercontext": ""}},
        ],
        "multitask_metrics_cfg": {"log_predictions": True,
                                  "metrics": {"wer": {"constraint": ".source_lang==.target_lang"}}},
        "model_defaults": {"asr_enc_hidden": E, "lm_enc_hidden": D, "lm_dec_hidden": D},
        "preprocessor": {"sample_rate": 16000, "normalize": "per_feature", "window_size": 0.025,
                         "window_stride": 0.01, "window": "hann", "features": N_MELS, "n_fft": N_FFT,
                         "log": True, "frame_splicing": 1, "dither": 0.0, "pad_to": 16, "pad_value": 0.0},
        "encoder": {"feat_in": N_MELS, "feat_out": -1, "n_layers": E_LAYERS, "d_model": E,
                    "subsampling": "dw_striding", "subsampling_factor": 8, "subsampling_conv_channels": SUB_C,
                    "causal_downsampling": False, "reduction": None, "reduction_position": None,
                    "reduction_factor": 1, "ff_expansion_factor": 4, "self_attention_model": "rel_pos",
                    "n_heads": E_HEADS, "att_context_size": [-1, -1], "xscaling": False, "untie_biases": True,
                    "pos_emb_max_len": 5000, "conv_kernel_size": K, "conv_norm_type": "batch_norm",
                    "conv_context_size": None, "dropout": 0, "dropout_pre_encoder": 0, "dropout_emb": 0,
                    "dropout_att": 0},
        "transf_encoder": {"num_layers": 0, "hidden_size": D, "inner_size": D_INNER,
                           "num_attention_heads": D_HEADS, "ffn_dropout": 0, "attn_score_dropout": 0,
                           "attn_layer_dropout": 0, "mask_future": False, "pre_ln": True,
                           "pre_ln_final_layer_norm": True},
        "transf_decoder": {"model_name": None, "pretrained": False, "encoder": None,
                           "pre_ln_final_layer_norm": True,
                           "config_dict": {"max_sequence_length": P, "num_token_types": 0,
                                           "embedding_dropout": 0, "learn_positional_encodings": False,
                                           "hidden_size": D, "inner_size": D_INNER, "num_layers": D_LAYERS,
                                           "num_attention_heads": D_HEADS, "ffn_dropout": 0,
                                           "attn_score_dropout": 0, "attn_layer_dropout": 0,
                                           "hidden_act": "relu", "pre_ln": True, "vocab_size": "None",
                                           "lm_dec_hidden": E}},
        "head": {"num_layers": 1, "activation": "relu", "log_softmax": True, "hidden_size": D,
                 "num_classes": vocab, "dropout": 0, "use_transformer_init": True},
        "decoding": {"strategy": "beam", "return_best_hypothesis": True,
                     "beam": {"beam_size": 1, "len_pen": 0.0, "max_generation_delta": -256}},
        "model_type": "cohere_asr",
        "architectures": ["CohereAsrForConditionalGeneration"],
        "is_encoder_decoder": True,
        "max_seq_len": P,
        "max_audio_clip_s": 3,
        "overlap_chunk_second": 1,
        "min_energy_window_samples": 1600,
        "supported_languages": ["da", "en"],
        "vocab_size": vocab,
        "batch_size": 1,
    }


def make_generation_config(tok):
    return {"_from_model_config": True, "bos_token_id": tok.piece_id("<|startoftranscript|>"),
            "decoder_start_token_id": tok.piece_id("\u2581"), "eos_token_id": tok.piece_id("<|endoftext|>"),
            "output_attentions": False, "output_hidden_states": False, "pad_token_id": tok.piece_id("<pad>"),
            "transformers_version": "4.51.3"}


def decoder_pos_enc(n, d):
    """§4.1 fixed sinusoid / sqrt(D), computed in float64."""
    pos = np.arange(n, dtype=np.float64)[:, None]
    omega = np.exp(-math.log(10000.0) * np.arange(0, d, 2, dtype=np.float64) / d)
    pe = np.zeros((n, d))
    pe[:, 0::2] = np.sin(pos * omega)
    pe[:, 1::2] = np.cos(pos * omega)
    return pe / math.sqrt(d)


def make_weights(vocab, eos_id, seed, eos_bias=EOS_BIAS, frontend_tensors=True,
                 gains=(SELF_OUT_GAIN, CROSS_OUT_GAIN, FFN_OUT_GAIN)):
    """{name: float32 / int64 array}, drawn in a fixed order from one numpy Generator."""
    rng = np.random.default_rng(seed)
    w = {}

    def linear(name, n_out, n_in, with_bias=True, conv_k=(), gain=1.0):
        # N(0, gain^2 / fan_in): activations keep unit scale, so logits have clear margins.
        fan_in = n_in * int(np.prod(conv_k))
        shape = (n_out, n_in) + tuple(conv_k)
        w[name + ".weight"] = (rng.standard_normal(shape) * (gain / math.sqrt(fan_in))).astype(np.float32)
        if with_bias:
            w[name + ".bias"] = (rng.standard_normal(n_out) * 0.02).astype(np.float32)

    def layer_norm(name, n):
        w[name + ".weight"] = (1.0 + 0.1 * rng.standard_normal(n)).astype(np.float32)
        w[name + ".bias"] = (0.1 * rng.standard_normal(n)).astype(np.float32)

    p = "encoder.pre_encode."
    linear(p + "conv.0", SUB_C, 1, conv_k=(3, 3))
    linear(p + "conv.2", SUB_C, 1, conv_k=(3, 3))          # depthwise: fan-in 9
    linear(p + "conv.3", SUB_C, SUB_C, conv_k=(1, 1))
    linear(p + "conv.5", SUB_C, 1, conv_k=(3, 3))
    linear(p + "conv.6", SUB_C, SUB_C, conv_k=(1, 1))
    linear(p + "out", E, SUB_C * (N_MELS // 8))

    for i in range(E_LAYERS):
        p = f"encoder.layers.{i}."
        for ff in ("1", "2"):
            layer_norm(p + "norm_feed_forward" + ff, E)
            linear(p + f"feed_forward{ff}.linear1", 4 * E, E)
            linear(p + f"feed_forward{ff}.linear2", E, 4 * E)
        layer_norm(p + "norm_self_att", E)
        for n in ("linear_q", "linear_k", "linear_v", "linear_out"):
            linear(p + "self_attn." + n, E, E)
        linear(p + "self_attn.linear_pos", E, E, with_bias=False)
        for n in ("pos_bias_u", "pos_bias_v"):
            w[p + "self_attn." + n] = (0.1 * rng.standard_normal((E_HEADS, E // E_HEADS))).astype(np.float32)
        layer_norm(p + "norm_conv", E)
        linear(p + "conv.pointwise_conv1", 2 * E, E, conv_k=(1,))
        linear(p + "conv.depthwise_conv", E, 1, conv_k=(K,))
        bn = p + "conv.batch_norm."
        w[bn + "weight"] = (1.0 + 0.1 * rng.standard_normal(E)).astype(np.float32)
        w[bn + "bias"] = (0.1 * rng.standard_normal(E)).astype(np.float32)
        w[bn + "running_mean"] = (0.1 * rng.standard_normal(E)).astype(np.float32)
        w[bn + "running_var"] = rng.uniform(0.5, 1.5, E).astype(np.float32)
        w[bn + "num_batches_tracked"] = np.array(0, dtype=np.int64)
        linear(p + "conv.pointwise_conv2", E, E, conv_k=(1,))
        layer_norm(p + "norm_out", E)

    linear("encoder_decoder_proj", D, E)

    e = "transf_decoder._embedding."
    emb = rng.standard_normal((vocab, D)).astype(np.float32)
    w[e + "token_embedding.weight"] = emb
    w[e + "position_embedding.pos_enc"] = decoder_pos_enc(P, D).astype(np.float32)
    layer_norm(e + "layer_norm", D)
    for j in range(D_LAYERS):
        p = f"transf_decoder._decoder.layers.{j}."
        for ln in ("layer_norm_1", "layer_norm_2", "layer_norm_3"):
            layer_norm(p + ln, D)
        for sub in ("first_sub_layer", "second_sub_layer"):
            for n in ("query_net", "key_net", "value_net", "out_projection"):
                out_gain = gains[0] if sub == "first_sub_layer" else gains[1]
                linear(p + f"{sub}.{n}", D, D, gain=out_gain if n == "out_projection" else 1.0)
        linear(p + "third_sub_layer.dense_in", D_INNER, D)
        linear(p + "third_sub_layer.dense_out", D, D_INNER, gain=gains[2])
    layer_norm("transf_decoder._decoder.final_layer_norm", D)

    w["log_softmax.mlp.layer0.weight"] = emb.copy()        # tied upstream: an exact copy
    cls_bias = 0.1 * rng.standard_normal(vocab)
    cls_bias[eos_id] += eos_bias
    w["log_softmax.mlp.layer0.bias"] = cls_bias.astype(np.float32)

    if frontend_tensors:
        w["preprocessor.featurizer.fb"] = slaney_mel(N_MELS, N_FFT, 16000)[None].astype(np.float32)
        w["preprocessor.featurizer.window"] = hann_symmetric(WIN).astype(np.float32)
    return w


def write_package(outdir, tok_path, config, gen, tensors, dtype):
    os.makedirs(outdir, exist_ok=True)
    for name, obj in (("config.json", config), ("generation_config.json", gen)):
        with open(os.path.join(outdir, name), "w", encoding="utf-8") as f:
            json.dump(obj, f, indent=2)
            f.write("\n")
    shutil.copyfile(tok_path, os.path.join(outdir, "tokenizer.model"))
    st = {}
    for name, arr in tensors.items():
        if arr.dtype == np.int64:
            st[name] = ("I64", arr)
        elif dtype == "f32":
            st[name] = ("F32", arr)
        elif dtype == "f16":
            st[name] = ("F16", arr.astype(np.float16))
        else:
            st[name] = ("BF16", arr)
    st_io.save(os.path.join(outdir, "model.safetensors"), st, metadata={"format": "pt"})


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("--tokenizer", required=True, help="SentencePiece tokenizer.model to copy")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--dtypes", default="f32", help="comma list of f32,f16,bf16 (f32 always goes to OUTDIR)")
    ap.add_argument("--no-frontend-tensors", action="store_true",
                    help="leave out preprocessor.featurizer.fb/window (loaders must compute them)")
    ap.add_argument("--eos-bias", type=float, default=EOS_BIAS)
    a = ap.parse_args()

    dtypes = [d.strip() for d in a.dtypes.split(",") if d.strip()]
    bad = [d for d in dtypes if d not in ("f32", "f16", "bf16")]
    if bad:
        sys.exit(f"make_tiny: unknown dtype(s) {bad}; use f32, f16, bf16")
    tok = Tokenizer(a.tokenizer)
    vocab = len(tok)
    tensors = make_weights(vocab, tok.piece_id("<|endoftext|>"), a.seed, a.eos_bias,
                           not a.no_frontend_tensors)
    config, gen = make_config(vocab), make_generation_config(tok)
    outdir = a.outdir.rstrip("/")
    write_package(outdir, a.tokenizer, config, gen, tensors, "f32")
    for dt in dtypes:
        if dt != "f32":
            write_package(f"{outdir}_{dt}", a.tokenizer, config, gen, tensors, dt)
    n_params = sum(int(np.prod(t.shape)) for t in tensors.values())
    print(f"make_tiny: {len(tensors)} tensors, {n_params} values, vocab {vocab} -> {outdir}"
          + "".join(f", {outdir}_{d}" for d in dtypes if d != "f32"), file=sys.stderr)


if __name__ == "__main__":
    main()
