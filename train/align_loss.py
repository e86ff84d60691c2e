#!/usr/bin/python3
"""Alignment supervision for the decoder's cross-attention.

Word timestamps in the engine come from the cross-attention of the top half of the decoder's
layers (dynamic time warping over their heads, as openai-whisper does). A small model trained on
text alone need not attend where a word is said (the shipped one attends the first frames), so
training adds a loss that pulls those heads onto the frames of the word each row predicts. The
times are the synthesizer's own: synth.py records every word's [start, end) from espeak-ng's
word events. Every token of a word (its pieces, and punctuation after it) gets the word's
frames; the row that predicts the end of text gets what follows the last word.

`python3 train/align_loss.py --selftest` checks the spans on a constructed case.
"""
import math
import sys

import torch

FRAME_S = 160 * 8 / 16000   # an encoder frame: the 10 ms hop times the x8 subsampling


def token_times(pieces, words):
    """[start, end) seconds for each token and then the end of text; None when the pieces do not
    make len(words) words (a piece beginning with U+2581 begins a word)."""
    idx, w = [], -1
    for p in pieces:
        if p.startswith("\u2581") or w < 0:
            w += 1
        idx.append(w)
    if not words or w + 1 != len(words):
        return None
    return [tuple(words[i]) for i in idx] + [(words[-1][1], math.inf)]


def frames(times, T):
    """Token times -> [lo, hi) frame spans within T valid frames, each at least one frame."""
    out = []
    for s, e in times:
        lo = min(max(int(s / FRAME_S), 0), T - 1)
        hi = T if e == math.inf else min(max(math.ceil(e / FRAME_S), lo + 1), T)
        out.append((lo, hi))
    return out


def attention_loss(attn, times, n3, row0):
    """Mean -log(attention mass on the row's span) over the aligning heads and rows.
    attn: list of [B, H, S, Tm] cross-attention weights; times: per utterance token_times() or
    None; n3: valid frames; row0: the row that predicts the first text token."""
    terms = []
    for b, tt in enumerate(times):
        if tt is None:
            continue
        for r, (lo, hi) in enumerate(frames(tt, int(n3[b]))):
            for a in attn:
                terms.append(a[b, :, row0 + r, lo:hi].sum(-1))               # [H]
    if not terms:
        return torch.zeros(())
    return -torch.log(torch.stack(terms).clamp(min=1e-6)).mean()


def selftest():
    pieces = ["\u2581Klokken", "\u2581er", "\u2581fem", "\u2581over", "\u2581h", "alv", "."]
    words = [[0.2, 0.6], [0.6, 0.75], [0.75, 1.0], [1.0, 1.3], [1.3, 1.7]]
    tt = token_times(pieces, words)
    assert tt[4] == tt[5] == tt[6] == (1.3, 1.7) and tt[7] == (1.7, math.inf), tt
    assert token_times(pieces, words[:4]) is None
    f = frames(tt, 25)
    assert f[0] == (2, 8) and f[1] == (7, 10) and f[-1] == (21, 25), f
    assert frames([(5.0, 6.0), (6.0, math.inf)], 25) == [(24, 25), (24, 25)]
    a = torch.zeros(1, 4, 12, 25)
    for r, (lo, hi) in enumerate(f):
        a[0, :, 3 + r, lo] = 1.0                                              # all mass inside
    assert float(attention_loss([a], [tt], torch.tensor([25]), 3)) < 1e-5
    a[0, :, 3, :] = 1.0 / 25                                                  # one row spread out
    assert float(attention_loss([a], [tt], torch.tensor([25]), 3)) > 0.1
    print("align_loss selftest ok")


if __name__ == "__main__" and "--selftest" in sys.argv:
    selftest()
