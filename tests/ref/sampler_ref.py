#!/usr/bin/python3
"""Hugging Face generate's logit processors, written in torch from their
documented semantics, as the reference for nn/sampler (test_sampler).

usage: sampler_ref.py OUT.txt

Processors, in generate's order on the float32 scores of one sequence:
  RepetitionPenaltyLogitsProcessor  each id of input_ids (prompt + generated):
                                    score < 0 ? score * p : score / p (gather, then scatter)
  MinNewTokensLengthLogitsProcessor scores[eos] = -inf while new tokens < min_new_tokens
  TemperatureLogitsWarper           scores / t (only when t != 1)
  TopKLogitsWarper                  scores < k-th largest -> -inf (only when k != 0)
  TopPLogitsWarper                  ascending sort, softmax, cumsum; cumsum <= 1 - p -> -inf,
                                    the largest always kept (only when p < 1)
then probs = softmax(scores). Greedy (do_sample False) is argmax of the first two.

The draw is ours (the sampler's inverse CDF in id order with a given uniform
u), so it is computed here in float64 from the reference probabilities.

Cases whose outcome hangs on rounding are drawn again: a top-p boundary
within 1e-4 of a cumulative probability, a tie split by top-p, a uniform
within 1e-4 of a cumulative boundary. Output, one case after another:
  V penalty min_new eos step temperature top_k top_p n_history u id logprob
  history ids / logits[V] / probs[V]
"""
import math
import sys

import numpy as np
import torch

torch.set_num_threads(1)
NEG = float("-inf")


def repetition_penalty(input_ids, scores, penalty):
    score = torch.gather(scores, 1, input_ids)
    score = torch.where(score < 0, score * penalty, score / penalty)
    return scores.scatter(1, input_ids, score)


def min_new_tokens(scores, new_tokens, min_new, eos):
    if eos >= 0 and new_tokens < min_new:
        scores = scores.clone()
        scores[:, eos] = NEG
    return scores


def top_k_warp(scores, k):
    k = min(k, scores.shape[-1])
    remove = scores < torch.topk(scores, k)[0][..., -1, None]
    return scores.masked_fill(remove, NEG)


def top_p_warp(scores, p):
    sorted_logits, sorted_idx = torch.sort(scores, descending=False)
    cum = sorted_logits.softmax(dim=-1).cumsum(dim=-1)
    remove = cum <= (1 - p)
    remove[..., -1:] = False
    return scores.masked_fill(remove.scatter(1, sorted_idx, remove), NEG)


def hf_probs(logits, history, c):
    scores = torch.tensor(logits, dtype=torch.float32)[None]
    if c["penalty"] != 1.0 and len(history):
        scores = repetition_penalty(torch.tensor(history, dtype=torch.int64)[None], scores, c["penalty"])
    scores = min_new_tokens(scores, c["step"], c["min_new"], c["eos"])
    if not torch.isfinite(scores).any():
        return np.full(scores.shape[-1], np.nan), scores[0].numpy()  # every id barred: no case
    if c["temperature"] == 0:
        probs = torch.zeros_like(scores)
        probs[0, int(torch.argmax(scores[0]))] = 1
        return probs[0].numpy(), scores[0].numpy()
    if c["temperature"] != 1.0:
        scores = scores / c["temperature"]
    if c["top_k"] != 0:
        scores = top_k_warp(scores, c["top_k"])
    warped = scores
    if c["top_p"] < 1.0:
        scores = top_p_warp(scores, c["top_p"])
    return torch.softmax(scores, dim=-1)[0].numpy(), warped[0].numpy()


def fragile(probs, warped, c):
    """Whether rounding could change the support or the draw (see the docstring)."""
    if c["temperature"] > 0 and c["top_p"] < 1.0:
        w = warped.astype(np.float64)
        finite = np.isfinite(w)
        e = np.zeros_like(w)
        e[finite] = np.exp(w[finite] - w[finite].max())
        order = np.argsort(-w, kind="stable")
        before = np.concatenate([[0.0], np.cumsum(e[order] / e.sum())[:-1]])
        if np.min(np.abs(before[1:][finite[order][1:]] - c["top_p"]), initial=1.0) < 1e-4:
            return True
        kept = probs > 0
        if set(warped[kept]) & set(warped[~kept & np.isfinite(warped)]):
            return True
    cum = np.cumsum(probs.astype(np.float64)[probs > 0])
    return bool(np.min(np.abs(cum[:-1] - c["u"]), initial=1.0) < 1e-4)


def draw(probs, u):
    cum, last = 0.0, 0
    for i in np.nonzero(probs > 0)[0]:
        cum += float(probs[i])
        last = int(i)
        if u < cum:
            return last
    return last


def make_case(rng, i):
    V = int(rng.choice([1, 2, 7, 50, 300, 2000]))
    scale = float(rng.choice([0.5, 2.0, 6.0]))
    logits = (rng.standard_normal(V) * scale).astype(np.float32)
    if V > 4:
        # exact ties (top-k at a tied value keeps them all) and barred ids
        tied = rng.choice(V, size=min(V // 3, 5), replace=False)
        logits[tied] = logits[tied[0]]
        if rng.random() < 0.3:
            logits[rng.choice(V, size=V // 10, replace=False)] = NEG
    if not np.isfinite(logits).any():
        logits[0] = 0.0
    f32 = lambda x: float(np.float32(x))  # noqa: E731  (the C side holds floats)
    c = {
        "penalty": f32(rng.choice([1.0, 1.1, 1.3, 0.7, 2.0])),
        "min_new": int(rng.choice([0, 3, 15])),
        "eos": int(rng.integers(-1, V)),
        "step": int(rng.integers(0, 20)),
        "temperature": f32(rng.choice([0.0, 0.5, 1.0, 1.0, 1.7]) if i % 9 else 0.0),
        "top_k": int(rng.choice([0, 0, 1, 3, 25, V, V + 5])),
        "top_p": f32(rng.choice([1.0, 1.0, 0.95, 0.8, 0.3, 1e-4])),
        "u": float(rng.random()),
    }
    history = rng.integers(0, V, size=int(rng.integers(0, 40))).tolist()
    if history and V > 1:
        history += history[: len(history) // 2]  # repeats: penalized once
    return c, history, logits


def main():
    out = sys.argv[1]
    rng = np.random.default_rng(20261201)
    cases = []
    while len(cases) < 300:
        c, history, logits = make_case(rng, len(cases))
        probs, warped = hf_probs(logits, history, c)
        if not np.isfinite(probs).all() or probs.sum() == 0 or fragile(probs, warped, c):
            continue
        tok = draw(probs, c["u"]) if c["temperature"] > 0 else int(np.argmax(probs))
        lg = logits.astype(np.float64)
        lse = lg[np.isfinite(lg)].max() + math.log(np.exp(lg[np.isfinite(lg)] - lg[np.isfinite(lg)].max()).sum())
        cases.append((c, history, logits, probs, tok, lg[tok] - lse))
    with open(out, "w") as f:
        f.write(f"{len(cases)}\n")
        for c, history, logits, probs, tok, logprob in cases:
            f.write(f"{len(logits)} {c['penalty']:.9g} {c['min_new']} {c['eos']} {c['step']} {c['temperature']:.9g} "
                    f"{c['top_k']} {c['top_p']:.9g} {len(history)} {c['u']:.17g} {tok} {logprob:.17g}\n")
            f.write(" ".join(str(h) for h in history) + "\n")
            f.write(" ".join(f"{x:.9g}" for x in logits) + "\n")
            f.write(" ".join(f"{x:.9g}" for x in probs) + "\n")
    print(f"{out}: {len(cases)} cases")


if __name__ == "__main__":
    main()
