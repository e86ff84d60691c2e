#!/usr/bin/python3
"""Qwen2ForCausalLM in torch, written from the upstream description (spec
vevo2.md §4.7; Hugging Face modeling_qwen2), and HF generate over it with
the logit processors of tests/ref/sampler_ref.py.

usage: qwen2_ref.py MODEL_DIR GOLDEN_DIR

Model (float32): x = embed[ids]; per layer, pre-norm
  n = RMSNorm(x) (x * rsqrt(mean(x^2) + eps) * w, in f32)
  q, k, v = n Wq^T + bq, n Wk^T + bk, n Wv^T + bv;  RoPE rotate-half on q and
  k: inv_freq = 1 / theta^(arange(0, d, 2) / d), emb = cat(freqs, freqs),
  q * cos + rotate_half(q) * sin;  K/V repeated for the query heads of their
  group (repeat_kv), softmax(q k^T / sqrt(d) + causal) v, then o_proj (no bias)
  x = x + attn;  x = x + down(silu(gate(m)) * up(m)) with m = RMSNorm(x)
logits = RMSNorm(x) . head^T with head = lm_head.weight, or the embedding
matrix when tie_word_embeddings. Generation recomputes the whole sequence at
every step (no cache): the C side's cache is checked against it.

GOLDEN_DIR gets (read by tests/drivers/test_qwen2_stages.c):
  seq.txt        prompt length, then the teacher-forced ids
  logits_tf.bin  f32 [len(seq)][vocab]: logits at every position
  greedy.txt     greedy ids (repetition penalty 1.1, min_new 5, 30 new), then
                 the top-1 margin of the processed scores at each step
  sampled.txt    the generation_config defaults with min_new 5, 40 new, the
                 uniforms of the draws, the ids, the first step whose draw
                 is within 1e-4 of a cumulative boundary (-1: none)
"""
import json
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(HERE, "..", "hviske_asr"))
import sampler_ref  # noqa: E402
import st_io  # noqa: E402

torch.set_num_threads(1)
MIN_NEW = 5


class Qwen2:
    def __init__(self, folder):
        with open(os.path.join(folder, "config.json")) as f:
            self.cfg = json.load(f)
        gen_path = os.path.join(folder, "generation_config.json")
        self.gen = json.load(open(gen_path)) if os.path.exists(gen_path) else {}
        self.t = {k: torch.from_numpy(np.asarray(v, dtype=np.float32))
                  for k, v in st_io.load(os.path.join(folder, "model.safetensors")).items()}
        c = self.cfg
        self.H, self.KV = c["num_attention_heads"], c["num_key_value_heads"]
        self.hd = c.get("head_dim", c["hidden_size"] // self.H)
        self.eps, self.theta = c["rms_norm_eps"], c["rope_theta"]
        self.head = self.t["model.embed_tokens.weight"] if c.get("tie_word_embeddings", True) else self.t["lm_head.weight"]

    def rmsnorm(self, x, w):
        var = x.pow(2).mean(-1, keepdim=True)
        return w * (x * torch.rsqrt(var + self.eps))

    def rope(self, x, pos):
        inv_freq = 1.0 / (self.theta ** (torch.arange(0, self.hd, 2, dtype=torch.int64).float() / self.hd))
        freqs = pos[:, None].float() * inv_freq[None, :]
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos(), emb.sin()
        half = self.hd // 2
        rot = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
        return x * cos[None] + rot * sin[None]

    def forward(self, ids, hidden=None):
        """Logits [L][vocab] of every position of IDS; HIDDEN, a list if given,
        receives the residual stream after each layer (the C trace's "layer")."""
        t, L = self.t, len(ids)
        x = t["model.embed_tokens.weight"][torch.tensor(ids)]
        pos = torch.arange(L)
        causal = torch.full((L, L), float("-inf")).triu(1)
        for i in range(self.cfg["num_hidden_layers"]):
            p = f"model.layers.{i}."
            lin = lambda n, a, b=True: torch.nn.functional.linear(  # noqa: E731
                a, t[p + n + ".weight"], t[p + n + ".bias"] if b else None)
            n = self.rmsnorm(x, t[p + "input_layernorm.weight"])
            q = lin("self_attn.q_proj", n).view(L, self.H, self.hd).transpose(0, 1)
            k = lin("self_attn.k_proj", n).view(L, self.KV, self.hd).transpose(0, 1)
            v = lin("self_attn.v_proj", n).view(L, self.KV, self.hd).transpose(0, 1)
            q, k = self.rope(q, pos), self.rope(k, pos)
            rep = self.H // self.KV
            k, v = k.repeat_interleave(rep, dim=0), v.repeat_interleave(rep, dim=0)
            att = torch.softmax(q @ k.transpose(1, 2) / np.sqrt(self.hd) + causal, dim=-1) @ v
            x = x + lin("self_attn.o_proj", att.transpose(0, 1).reshape(L, self.H * self.hd), False)
            m = self.rmsnorm(x, t[p + "post_attention_layernorm.weight"])
            mlp = lin("mlp.down_proj", torch.nn.functional.silu(lin("mlp.gate_proj", m, False))
                      * lin("mlp.up_proj", m, False), False)
            x = x + mlp
            if hidden is not None:
                hidden.append(x.numpy().copy())
        return self.rmsnorm(x, t["model.norm.weight"]) @ self.head.T


def bar_stops(logits, stops, step, min_new):
    """HF's MinNewTokensLengthLogitsProcessor over the list of eos ids."""
    logits = logits.copy()
    if step < min_new:
        logits[stops] = float("-inf")
    return logits


def generate(model, prompt, c, stops, max_new, uniforms=None):
    """HF generate for one sequence: (ids, margins or fragile step)."""
    seq, ids, margins, fragile = list(prompt), [], [], -1
    for step in range(max_new):
        logits = bar_stops(model.forward(seq)[-1].numpy().astype(np.float32), stops, step, c["min_new"])
        case = dict(c, step=step, eos=-1, u=uniforms[step] if uniforms else 0.0)
        probs, warped = sampler_ref.hf_probs(logits, seq, case)
        if c["temperature"] == 0:
            s = np.sort(sampler_ref.repetition_penalty(torch.tensor([seq]), torch.tensor(logits)[None],
                                                       c["penalty"])[0].numpy())
            margins.append(float(s[-1] - s[-2]))
            tok = int(np.argmax(probs))
        else:
            if fragile < 0 and sampler_ref.fragile(probs, warped, case):
                fragile = step
            tok = sampler_ref.draw(probs, uniforms[step])
        ids.append(tok)
        seq.append(tok)
        if tok in stops:
            break
    return ids, (margins if c["temperature"] == 0 else fragile)


def main():
    folder, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    model = Qwen2(folder)
    V = model.cfg["vocab_size"]
    rng = np.random.default_rng(5)
    prompt = rng.integers(0, V - 4, size=17).tolist()
    seq = prompt + rng.integers(0, V, size=23).tolist()
    with open(os.path.join(out, "seq.txt"), "w") as f:
        f.write(f"{len(prompt)}\n{' '.join(map(str, seq))}\n")
    hidden = []
    model.forward(seq, hidden).numpy().astype("<f4").tofile(os.path.join(out, "logits_tf.bin"))
    np.stack(hidden).astype("<f4").tofile(os.path.join(out, "hidden_tf.bin"))
    g = model.gen
    stops = g["eos_token_id"] if isinstance(g["eos_token_id"], list) else [g["eos_token_id"]]
    greedy = {"penalty": 1.1, "min_new": MIN_NEW, "temperature": 0.0, "top_k": 0, "top_p": 1.0}
    ids, margins = generate(model, prompt, greedy, stops, 30)
    with open(os.path.join(out, "greedy.txt"), "w") as f:
        f.write(" ".join(map(str, ids)) + "\n" + " ".join(f"{m:.9g}" for m in margins) + "\n")
    f32 = lambda x: float(np.float32(x))  # noqa: E731
    sampled = {"penalty": f32(g["repetition_penalty"]), "min_new": MIN_NEW, "temperature": f32(g["temperature"]),
               "top_k": g["top_k"], "top_p": f32(g["top_p"])}
    uniforms = rng.random(40).tolist()
    ids, fragile = generate(model, prompt, sampled, stops, 40, uniforms)
    with open(os.path.join(out, "sampled.txt"), "w") as f:
        f.write(" ".join(f"{u:.17g}" for u in uniforms) + "\n" + " ".join(map(str, ids)) + f"\n{fragile}\n")
    print(f"{out}: prompt {len(prompt)}, greedy {len(margins)} ids, sampled {len(ids)} ids, fragile step {fragile}")


if __name__ == "__main__":
    main()
