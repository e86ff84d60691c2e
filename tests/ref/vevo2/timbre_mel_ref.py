#!/usr/bin/python3
"""The timbre prompt's mel of Vevo2 (Amphion MelSpectrogram + the FM's
normalization, spec vevo2.md §4.10) in PyTorch: reflect-pad (n_fft-hop)/2,
torch.stft not centred with a periodic Hann window, sqrt(re^2+im^2+1e-9),
librosa's Slaney mel, log(clamp(., 1e-5)), (v - mel_mean)/sqrt(mel_var).
"""
import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "hviske_asr"))
from cohere_ref import slaney_mel  # noqa: E402


def timbre_mel(wav, pre):
    """wav [N] (numpy, pre['sample_rate']) -> [floor(N/hop)][num_mels] f32; PRE a config's preprocess."""
    n_fft, hop, win = pre["n_fft"], pre["hop_size"], pre["win_size"]
    y = torch.from_numpy(np.asarray(wav, np.float32))[None, None]
    pad = (n_fft - hop) // 2
    y = F.pad(y, (pad, pad), mode="reflect")[:, 0]
    spec = torch.stft(y, n_fft, hop_length=hop, win_length=win, window=torch.hann_window(win), center=False,
                      normalized=False, onesided=True, return_complex=True)
    spec = torch.view_as_real(spec)
    mag = torch.sqrt(spec.pow(2).sum(-1) + 1e-9)
    fb = slaney_mel(pre["num_mels"], n_fft, pre["sample_rate"], pre["fmin"], pre["fmax"])
    mel = torch.matmul(torch.from_numpy(fb.astype(np.float32)), mag)
    mel = torch.log(torch.clamp(mel, min=1e-5))
    mel = (mel - pre["mel_mean"]) / math.sqrt(pre["mel_var"])
    return mel[0].T.numpy().astype(np.float32)
