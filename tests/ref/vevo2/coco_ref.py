#!/usr/bin/python3
"""Vevo2's Coco tokenizers (Amphion CocoContentStyle / CocoStyle, spec
vevo2.md §4.5), encoder side, in PyTorch, and tiny random tokenizer files at
their published paths (§2):
  tokenizer/contentstyle_fvq16384_12.5hz/model.safetensors
  tokenizer/prosody_fvq512_6.25hz/model.safetensors
  contentstyle_modeling/posttrained/amphion_config.json  (model.coco_style, model.coco_content_style)
The files also hold decoder-side tensors (decoder.*, upsample_layers.*,
*_output_layer.*, out_project), as the published ones are thought to: a
loader must ignore them.

usage: coco_ref.py write ROOT [--dtype F32|F16|BF16] [--seed N]
"""
import argparse
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import vocoder_ref  # noqa: E402
from vocoder_ref import Init, backbone_tensors, read_relaxed_json, tensor, vocos_backbone  # noqa: E402

FILES = {"coco_content_style": "tokenizer/contentstyle_fvq16384_12.5hz/model.safetensors",
         "coco_style": "tokenizer/prosody_fvq512_6.25hz/model.safetensors"}
AMPHION_CONFIG = "contentstyle_modeling/posttrained/amphion_config.json"
# spec §7.2; the real values are in §2.1
TINY = {
    "coco_content_style": {"coco_type": "content_style", "downsample_rate": 4, "codebook_size": 64,
                           "hidden_size": 32, "codebook_dim": 4, "whisper_dim": 64, "chromagram_dim": 24,
                           "use_normed_whisper": True, "whisper_stats_path": "whisper_stats.pt",
                           "encoder": {"vocos_dim": 16, "vocos_intermediate_dim": 32, "vocos_num_layers": 2},
                           "decoder": {"vocos_dim": 16, "vocos_intermediate_dim": 32, "vocos_num_layers": 1}},
    "coco_style": {"coco_type": "style", "downsample_rate": 8, "codebook_size": 16, "hidden_size": 32,
                   "codebook_dim": 4, "whisper_dim": 64, "chromagram_dim": 24,
                   "encoder": {"vocos_dim": 16, "vocos_intermediate_dim": 32, "vocos_num_layers": 2},
                   "decoder": {"vocos_dim": 16, "vocos_intermediate_dim": 32, "vocos_num_layers": 1}},
}
QUANT = "quantizer.quantizers.0."


def coco_tensors(init, c):
    H, enc, dec = c["hidden_size"], c["encoder"], c["decoder"]
    t = {}
    if c["coco_type"] == "content_style":
        t["whisper_input_layer.weight"] = init.weight(H, c["whisper_dim"])
        t["whisper_input_layer.bias"] = init.bias(H)
    t["chromagram_input_layer.weight"] = init.weight(H, c["chromagram_dim"])
    t["chromagram_input_layer.bias"] = init.bias(H)
    for i in range(int(np.log2(c["downsample_rate"]))):
        t[f"downsample_layers.{2 * i}.weight"] = init.weight(H, H, 3)
        t[f"downsample_layers.{2 * i}.bias"] = init.bias(H)
    t.update(backbone_tensors(init, "encoder.0.", H, enc["vocos_dim"], enc["vocos_intermediate_dim"],
                              enc["vocos_num_layers"]))
    t["encoder.1.weight"], t["encoder.1.bias"] = init.weight(H, enc["vocos_dim"]), init.bias(H)
    d = c["codebook_dim"]
    t[QUANT + "in_project.weight_g"] = init.uniform((d, 1, 1), 0.5, 1.5)
    t[QUANT + "in_project.weight_v"] = init.normal((d, H, 1), 1.0)
    t[QUANT + "in_project.bias"] = init.bias(d)
    t[QUANT + "codebook.weight"] = init.normal((c["codebook_size"], d), 1.0)
    # decoder side: present in the files, not used for ids
    t[QUANT + "out_project.weight_g"] = init.uniform((H, 1, 1), 0.5, 1.5)
    t[QUANT + "out_project.weight_v"] = init.normal((H, d, 1), 1.0)
    t[QUANT + "out_project.bias"] = init.bias(H)
    t.update(backbone_tensors(init, "decoder.0.", H, dec["vocos_dim"], dec["vocos_intermediate_dim"],
                              dec["vocos_num_layers"]))
    t["decoder.1.weight"], t["decoder.1.bias"] = init.weight(H, dec["vocos_dim"]), init.bias(H)
    t["upsample_layers.0.weight"], t["upsample_layers.0.bias"] = init.weight(H, H, 4), init.bias(H)
    t["chromagram_output_layer.weight"] = init.weight(c["chromagram_dim"], H)
    if c["coco_type"] == "content_style":
        t["whisper_output_layer.weight"] = init.weight(c["whisper_dim"], H)
    return t


def write_amphion_config(root, cocos):
    """contentstyle_modeling/posttrained/amphion_config.json with the two Coco configs."""
    path = os.path.join(root, AMPHION_CONFIG)
    vocoder_ref.write_relaxed_json(path, {"model_type": "Vevo2", "model": cocos},
                                   "Vevo2 tokenizers, tiny random weights for tests")
    return path


def write_tiny(root, seed=0, dtype="F32", dims=None):
    """Both tokenizer files and amphion_config.json under ROOT. DIMS maps a config
    name (coco_content_style, coco_style) to keys overriding TINY's."""
    cocos = {}
    for k, name in enumerate(FILES):
        c = dict(TINY[name], **((dims or {}).get(name, {})))
        cocos[name] = c
        t = coco_tensors(Init(seed + k), c)
        vocoder_ref.save(os.path.join(root, FILES[name]), t, dtype)
    return write_amphion_config(root, cocos)


def coco_encode(path, c, whisper, chroma):
    """whisper [T][whisper_dim] (or None), chroma [T][chromagram_dim] -> (latents [n][d], ids [n], gaps [n]).
    Latents are the normalized in_project outputs; gaps the top-2 cosine margins (float64)."""
    w = vocoder_ref.st_io.load(path)
    with torch.no_grad():
        x = F.linear(torch.from_numpy(chroma), tensor(w, "chromagram_input_layer.weight"),
                     tensor(w, "chromagram_input_layer.bias"))
        if c["coco_type"] == "content_style":
            x = x + F.linear(torch.from_numpy(whisper), tensor(w, "whisper_input_layer.weight"),
                             tensor(w, "whisper_input_layer.bias"))
        x = x.T[None]
        for i in range(int(np.log2(c["downsample_rate"]))):
            x = F.gelu(F.conv1d(x, tensor(w, f"downsample_layers.{2 * i}.weight"),
                                tensor(w, f"downsample_layers.{2 * i}.bias"), stride=2, padding=1))
        x = vocos_backbone(w, "encoder.0.", x, c["encoder"]["vocos_num_layers"])
        x = F.linear(x, tensor(w, "encoder.1.weight"), tensor(w, "encoder.1.bias"))
        proj = torch.nn.utils.weight_norm(torch.nn.Conv1d(c["hidden_size"], c["codebook_dim"], 1))
        proj.weight_g.copy_(tensor(w, QUANT + "in_project.weight_g"))
        proj.weight_v.copy_(tensor(w, QUANT + "in_project.weight_v"))
        proj.bias.copy_(tensor(w, QUANT + "in_project.bias"))
        z = proj(x.transpose(1, 2))[0].T
        # FactorizedVectorQuantize.decode_latents: L2 distance of normalized vectors
        z = F.normalize(z)
        cb = F.normalize(tensor(w, QUANT + "codebook.weight"))
        dist = z.pow(2).sum(1, keepdim=True) - 2 * z @ cb.t() + cb.pow(2).sum(1, keepdim=True).t()
        ids = (-dist).max(1)[1]
        cos = np.sort(z.double().numpy() @ cb.double().numpy().T, axis=1)
        gaps = cos[:, -1] - cos[:, -2]
    return z.numpy().astype(np.float32), ids.numpy().astype(np.int32), gaps


def configs(root):
    return read_relaxed_json(os.path.join(root, AMPHION_CONFIG))["model"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cmd", choices=["write"])
    ap.add_argument("root")
    ap.add_argument("--dtype", default="F32", choices=["F32", "F16", "BF16"])
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    print(write_tiny(a.root, a.seed, a.dtype))


if __name__ == "__main__":
    main()
