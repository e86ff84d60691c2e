#!/usr/bin/python3
"""Independent PyTorch reference of MarbleNet VAD (specs/vad_models.md §2)."""
import json

import numpy as np
import torch
import torch.nn.functional as F

import safetensors_np

RATE = 16000
FRAME = 320  # samples per output frame: hop 160 x output stride 2
BN_EPS = 1e-3
LOG_GUARD = 2.0 ** -24


def features(audio, w, cfg):
    """16 kHz float audio [N] -> log-mel [1, n_mels, F'] (spec §2.2)."""
    n_fft = cfg["n_fft"]
    hop = round(cfg["window_stride"] * RATE)
    win = w["preprocessor.featurizer.window"]
    # The win_length window sits centred in the n_fft frame, zeros around it.
    off = (n_fft - win.shape[0]) // 2
    window = torch.zeros(n_fft)
    window[off:off + win.shape[0]] = win
    x = F.pad(audio, (n_fft // 2, n_fft // 2))  # center=True, constant (zero) padding
    frames = x.unfold(0, n_fft, hop) * window  # [F, n_fft], F = 1 + N // hop
    spec = torch.fft.rfft(frames, dim=1)  # [F, n_fft/2 + 1], unnormalised
    mag = torch.sqrt(spec.real ** 2 + spec.imag ** 2)
    power = (mag * mag).T  # [bins, F]
    fb = w["preprocessor.featurizer.fb"].reshape(cfg["n_mels"], -1)
    logmel = torch.log(fb @ power + LOG_GUARD)
    pad_to = cfg["pad_to"]
    extra = -logmel.shape[1] % pad_to
    return F.pad(logmel, (0, extra))[None]  # zero frames: 0 in the log domain


class MarbleNet(torch.nn.Module):
    def __init__(self, weights, cfg):
        super().__init__()
        self.w = {k: torch.from_numpy(v) for k, v in weights.items()}
        self.cfg = cfg
        for b, blk in enumerate(cfg["jasper"]):
            # The spec defines the residual branch only for stride 1 blocks.
            if blk["residual"] and blk["stride"] != 1:
                raise ValueError(f"jasper block {b}: residual with stride {blk['stride']}")

    def bn(self, x, prefix):
        w = self.w
        return F.batch_norm(x, w[prefix + ".running_mean"], w[prefix + ".running_var"],
                            w[prefix + ".weight"], w[prefix + ".bias"],
                            training=False, eps=BN_EPS)

    def repeat(self, x, b, r, blk):
        k, s, d = blk["kernel"], blk["stride"], blk["dilation"]
        pad = d * (k - 1) // 2
        p = f"encoder.encoder.{b}.mconv."
        if blk["separable"]:
            x = F.conv1d(x, self.w[f"{p}{5 * r}.conv.weight"], stride=s, padding=pad,
                         dilation=d, groups=x.shape[1])
            x = F.conv1d(x, self.w[f"{p}{5 * r + 1}.conv.weight"])
            return self.bn(x, f"{p}{5 * r + 2}")
        x = F.conv1d(x, self.w[f"{p}{3 * r}.conv.weight"], stride=s, padding=pad, dilation=d)
        return self.bn(x, f"{p}{3 * r + 1}")

    def forward(self, feats):
        """feats [1, n_mels, F'] -> logits [T, classes]."""
        x = feats
        for b, blk in enumerate(self.cfg["jasper"]):
            res_in = x
            for r in range(blk["repeat"]):
                if r:
                    x = F.relu(x)  # between repeats, not after the last
                x = self.repeat(x, b, r, blk)
            if blk["residual"]:
                p = f"encoder.encoder.{b}.res.0."
                x = x + self.bn(F.conv1d(res_in, self.w[p + "0.conv.weight"]), p + "1")
            x = F.relu(x)
        logits = F.conv1d(x, self.w["decoder.layer0.weight"][:, :, None],
                          self.w["decoder.layer0.bias"])
        return logits[0].T


def marblenet_probs(weights_path, config_path, audio):
    """Per-output-frame (20 ms) speech probabilities of 16 kHz mono float audio."""
    with open(config_path) as f:
        cfg = json.load(f)
    if cfg["sample_rate"] != RATE:
        raise ValueError(f"{config_path}: sample_rate {cfg['sample_rate']}, expected {RATE}")
    if cfg["window"] != "hann" or str(cfg["normalize"]).lower() not in ("none", "null"):
        raise ValueError(f"{config_path}: only window 'hann' and normalize None are defined")
    model = MarbleNet(safetensors_np.load(weights_path), cfg)
    with torch.no_grad():
        feats = features(torch.from_numpy(np.asarray(audio, dtype=np.float32)), model.w, cfg)
        logits = model(feats)
        return torch.softmax(logits, dim=1)[:, 1].numpy().astype(np.float32)


def marblenet_segments(probs, n_samples, threshold=0.5):
    """Runs of p >= threshold -> (start, end, mean p), spec §2.5.

    Project decision (differs from spec A4): ends are clamped to n_samples,
    and a run that then has no samples left is dropped.
    """
    segs = []
    run = None
    for j, p in enumerate(list(probs) + [None]):  # sentinel closes an open run at T
        if p is not None and p >= threshold:
            run = j if run is None else run
        elif run is not None:
            conf = float(np.mean(np.asarray(probs[run:j], dtype=np.float64)))
            start, end = run * FRAME, min(j * FRAME, n_samples)
            if end > start:  # a run wholly past the end of the audio is dropped
                segs.append((start, end, conf))
            run = None
    return segs
