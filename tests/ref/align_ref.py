#!/usr/bin/python3
"""Reference of the alignment stage (src/nn/align.c), written from
openai-whisper's timing.py description with numpy/scipy: per-head
standardization over the tokens, a width-7 median filter over time with
mirrored edges (scipy 'mirror' = torch 'reflect'), the mean over heads, DTW
on the negated matrix, and the first frame of each row on the path.
Writes cases to OUT: 'heads rows frames', the weights, then the first frames."""
import sys

import numpy as np
from scipy.ndimage import median_filter


def dtw(x):
    n, m = x.shape
    cost = np.full((n + 1, m + 1), np.inf)
    trace = -np.ones((n + 1, m + 1), dtype=np.int64)
    cost[0, 0] = 0
    for j in range(1, m + 1):
        for i in range(1, n + 1):
            c0, c1, c2 = cost[i - 1, j - 1], cost[i - 1, j], cost[i, j - 1]
            if c0 < c1 and c0 < c2:
                c, t = c0, 0
            elif c1 < c0 and c1 < c2:
                c, t = c1, 1
            else:
                c, t = c2, 2
            cost[i, j] = x[i - 1, j - 1] + c
            trace[i, j] = t
    trace[0, :] = 2
    trace[:, 0] = 1
    i, j, path = n, m, []
    while i > 0 or j > 0:
        path.append((i - 1, j - 1))
        t = trace[i, j]
        i, j = (i - 1, j - 1) if t == 0 else (i - 1, j) if t == 1 else (i, j - 1)
    return np.array(path[::-1])


def medfilt_width(frame_s):
    """openai-whisper's 7 frames of 20 ms as the widest odd filter spanning no more than 140 ms
    at frames of FRAME_S seconds (nn/align.h)."""
    w = max(1, int(0.14 / frame_s + 1e-9))
    return w if w % 2 else w - 1


def align(w, width=7):
    mean = w.mean(axis=1, keepdims=True)
    std = w.std(axis=1, keepdims=True)
    z = (w - mean) / np.where(std > 0, std, 1)
    if w.shape[2] > width // 2:
        z = median_filter(z, size=(1, 1, width), mode="mirror")
    path = dtw(-z.mean(axis=0).astype(np.float64))
    first = np.full(w.shape[1], -1)
    for i, j in path:
        if first[i] < 0:
            first[i] = j
    return first


def clamp_words(words):
    """openai-whisper's add_word_timestamps corrections of words that took in a pause, on
    [text, start, end] lists of one segment (times from its start)."""
    d = np.array([e - s for _, s, e in words])
    d = d[d.nonzero()]
    if len(d) == 0:
        return words
    median = min(0.7, float(np.median(d)))
    longest = median * 2
    ends = [w[0][-1:] in (".", "?", "!") for w in words]
    for i in range(1, len(words)):
        if words[i][2] - words[i][1] > longest:
            if ends[i]:
                words[i][2] = words[i][1] + longest
            elif ends[i - 1]:
                words[i][1] = words[i][2] - longest
    w0 = words[0]
    if w0[2] > median * 4 and (w0[2] - w0[1] > longest or (len(words) > 1 and words[1][2] - w0[1] > longest * 2)):
        if len(words) > 1 and words[1][2] - words[1][1] > longest:
            b = max(words[1][2] / 2, words[1][2] - longest)
            w0[2] = words[1][1] = b
        w0[1] = max(0, w0[2] - longest)
    return words


def case(rng, heads, rows, frames, diagonal):
    logits = rng.standard_normal((heads, rows, frames))
    if diagonal:   # a monotonic alignment under noise, as aligning heads give
        centers = np.sort(rng.uniform(0, frames - 1, rows))
        logits += -0.5 * ((np.arange(frames)[None, None, :] - centers[None, :, None]) / 1.5) ** 2 * 4
    w = np.exp(logits - logits.max(axis=2, keepdims=True))
    return (w / w.sum(axis=2, keepdims=True)).astype(np.float32)


def main():
    rng = np.random.default_rng(2024)
    with open(sys.argv[1], "w") as f:
        for heads, rows, frames, diag in ((4, 11, 43, True), (6, 5, 120, True), (2, 9, 30, False), (1, 3, 3, True),
                                          (3, 1, 12, False), (8, 25, 375, True)):
            w = case(rng, heads, rows, frames, diag)
            first = align(w.astype(np.float64))
            f.write(f"{heads} {rows} {frames}\n")
            f.write(" ".join(f"{v:.9g}" for v in w.ravel()) + "\n")
            f.write(" ".join(str(int(v)) for v in first) + "\n")


if __name__ == "__main__":
    main()
