#!/usr/bin/python3
"""Alignment supervision for the decoder's cross-attention.

Word timestamps in the engine come from the cross-attention of the top half of the decoder's
layers (dynamic time warping over their heads, as openai-whisper does). A small model trained on
text alone need not attend where a token is said, so training adds a loss that pulls those heads
onto the frames of the token each row predicts. The frames come from the best CTC path of the
auxiliary encoder head (no extra labels): token k occupies its run of frames on that path; the
row that predicts it is asked to put its attention on [start of token k, start of token k+1), the
row that predicts the end of text on what follows the last token.

`python3 train/align_loss.py --selftest` checks the Viterbi path against brute force.
"""
import itertools
import sys

import numpy as np
import torch


def ctc_best_path(lp, labels, T, blank=0):
    """Most likely CTC path of LABELS through log-probs LP [T_max, V] over the first T frames:
    (each label's first frame, a strictly increasing list; the frame after the last label's run).
    None when T frames cannot hold the labels."""
    L = len(labels)
    ext = [blank]
    for x in labels:
        ext += [x, blank]
    S = len(ext)
    need = L + sum(1 for i in range(1, L) if labels[i] == labels[i - 1])
    if L == 0 or T < need:
        return None
    e = lp[:T, ext].numpy().astype(np.float64)                              # [T, S]
    skip = np.zeros(S, dtype=bool)                                          # s-2 -> s allowed
    for s in range(2, S):
        skip[s] = ext[s] != blank and ext[s] != ext[s - 2]
    neg = -1e30
    score = np.full(S, neg)
    score[0], score[1] = e[0, 0], e[0, 1]
    back = np.zeros((T, S), dtype=np.int8)                                  # 0 stay, 1 from s-1, 2 from s-2
    for t in range(1, T):
        stay = score
        one = np.concatenate(([neg], score[:-1]))
        two = np.where(skip, np.concatenate(([neg, neg], score[:-2])), neg)
        cand = np.stack([stay, one, two])
        back[t] = cand.argmax(0)
        score = cand.max(0) + e[t]
    s = S - 1 if score[S - 1] >= score[S - 2] else S - 2
    first, after = [0] * L, 0
    for t in range(T - 1, -1, -1):
        if s % 2 == 1:
            first[s // 2] = t                                               # ends as the earliest frame
            if s == S - 2 and not after:
                after = t + 1
        s -= int(back[t, s]) if t > 0 else 0
    return first, after


def row_spans(first, after, T):
    """[begin, end) frames for the rows predicting tokens 0..L-1 and the end of text."""
    spans = [(first[k], first[k + 1]) for k in range(len(first) - 1)]
    spans.append((first[-1], after))
    spans.append((after, T) if after < T else (T - 1, T))
    return spans


def attention_loss(attn, ctc_lp, texts, n3, row0):
    """Mean -log(attention mass on the row's span) over the aligning heads' rows.
    attn: list of [B, H, S, Tm] cross-attention weights; ctc_lp: [Tm, B, V] log-probs (detached);
    texts: the token lists; n3: valid frames; row0: the row that predicts the first text token."""
    terms = []
    lp = ctc_lp.detach().transpose(0, 1)                                    # [B, Tm, V]
    for b, t in enumerate(texts):
        T = int(n3[b])
        path = ctc_best_path(lp[b], t, T)
        if path is None:
            continue
        for r, (lo, hi) in enumerate(row_spans(*path, T)):
            for a in attn:
                terms.append(a[b, :, row0 + r, lo:hi].sum(-1))               # [H]
    if not terms:
        return torch.zeros(())
    return -torch.log(torch.stack(terms).clamp(min=1e-6)).mean()


def selftest():
    rng = np.random.default_rng(0)
    checked = 0
    for trial in range(200):
        V, T = 4, int(rng.integers(2, 7))
        L = int(rng.integers(1, 4))
        labels = [int(x) for x in rng.integers(1, V, L)]
        lp = torch.log_softmax(torch.tensor(rng.normal(size=(T, V)) * 2), -1)
        got = ctc_best_path(lp, labels, T)
        best, want = -1e30, None
        for path in itertools.product(range(V), repeat=T):                 # every frame labelling
            col, prev, firsts, after = [], 0, [], 0
            for t, x in enumerate(path):
                if x != 0 and x != prev:
                    col.append(x)
                    firsts.append(t)
                if x != 0 and len(col) == L:
                    after = t + 1
                prev = x
            if col != labels:
                continue
            sc = float(sum(lp[t, x] for t, x in enumerate(path)))
            if sc > best:
                best, want = sc, (firsts, after)
        assert got == want, (labels, T, got, want)
        checked += got is not None
    assert checked > 100, checked
    print("align_loss selftest: Viterbi paths equal brute force on %d cases" % checked)


if __name__ == "__main__" and "--selftest" in sys.argv:
    selftest()
