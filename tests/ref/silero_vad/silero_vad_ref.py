#!/usr/bin/python3
"""Independent PyTorch reference of Silero VAD 16 kHz (specs/vad_models.md §1)."""
import numpy as np
import torch
import torch.nn.functional as F

import safetensors_np

RATE = 16000
CHUNK = 512
CONTEXT = 64
HIDDEN = 128


class SileroVAD(torch.nn.Module):
    def __init__(self, weights):
        super().__init__()
        self.w = {k: torch.from_numpy(v) for k, v in weights.items()}
        self.cell = torch.nn.LSTMCell(HIDDEN, HIDDEN)  # PyTorch gate order i, f, g, o
        with torch.no_grad():
            for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
                getattr(self.cell, name).copy_(self.w["lstm_cell." + name])

    def features(self, x):
        """x: [B, 576] = 64 context + 512 chunk -> encoder output u: [B, 128]."""
        w = self.w
        x = F.pad(x[:, None, :], (0, CONTEXT), mode="reflect")  # right only, edge not repeated
        spec = F.conv1d(x, w["stft_conv.weight"], stride=128)  # [B, 258, 4]
        re, im = spec[:, :129], spec[:, 129:]
        y = torch.sqrt(re * re + im * im)
        for i, stride in ((1, 1), (2, 2), (3, 2), (4, 1)):
            y = F.relu(F.conv1d(y, w[f"conv{i}.weight"], w[f"conv{i}.bias"],
                                stride=stride, padding=1))
        return y[:, :, 0]

    def forward(self, inputs):
        """inputs: [n, 576] model inputs in chunk order -> probs [n].

        The context is raw audio, so every chunk's input is known in advance:
        the encoder runs batched and only the LSTM walks the chunks in order.
        """
        u = self.features(inputs)
        h = torch.zeros(1, HIDDEN)
        c = torch.zeros(1, HIDDEN)
        fw = self.w["final_conv.weight"].reshape(1, HIDDEN)
        fb = self.w["final_conv.bias"]
        probs = []
        for t in range(u.shape[0]):
            h, c = self.cell(u[t:t + 1], (h, c))
            # ReLU only on the output path; the stored state stays pre-ReLU.
            probs.append(torch.sigmoid(F.relu(h) @ fw.T + fb)[0, 0])
        return torch.stack(probs)


def chunk_inputs(audio):
    """Zero-pad to whole chunks and prepend each chunk's 64-sample context."""
    n = len(audio)
    chunks = -(-n // CHUNK)
    padded = np.zeros(CONTEXT + chunks * CHUNK, dtype=np.float32)  # leading zeros = reset context
    padded[CONTEXT:CONTEXT + n] = audio
    idx = np.arange(chunks)[:, None] * CHUNK + np.arange(CONTEXT + CHUNK)[None, :]
    return torch.from_numpy(padded[idx])


def silero_probs(weights_path, audio):
    """Per-chunk speech probabilities (float32) of 16 kHz mono float audio."""
    audio = np.asarray(audio, dtype=np.float32)
    if len(audio) == 0:
        return np.zeros(0, dtype=np.float32)
    model = SileroVAD(safetensors_np.load(weights_path))
    with torch.no_grad():
        return model(chunk_inputs(audio)).numpy().astype(np.float32)


def silero_segments(probs, n_samples, threshold=0.5, neg_threshold=-1,
                    min_speech_ms=250, min_silence_ms=100, speech_pad_ms=30,
                    max_speech_s=1e9, min_silence_at_max_speech_ms=98,
                    use_max_poss_sil_at_max_speech=True):
    """Offline probability -> [start, end) segments, spec §1.6 (get_speech_timestamps)."""
    ms = lambda v: RATE * int(v) // 1000
    min_speech = ms(min_speech_ms)
    min_silence = ms(min_silence_ms)
    pad = ms(speech_pad_ms)
    max_speech = int(RATE * max_speech_s) - CHUNK - 2 * pad
    min_sil_max = ms(min_silence_at_max_speech_ms)
    neg = neg_threshold if neg_threshold >= 0 else max(threshold - 0.15, 0.01)
    use_max = use_max_poss_sil_at_max_speech

    segs = []
    triggered = False
    start = temp_end = prev_end = next_start = 0
    possible_ends = []
    for i, p in enumerate(probs):
        cur = CHUNK * i
        speech = p >= threshold
        if speech and temp_end:
            silence = cur - temp_end
            if silence > min_sil_max:
                possible_ends.append((temp_end, silence))
            temp_end = 0
            if next_start < prev_end:
                next_start = cur
        if speech and not triggered:
            triggered = True
            start = cur
            continue
        if triggered and cur - start > max_speech:
            if use_max and possible_ends:
                pos, silence = max(possible_ends, key=lambda e: e[1])  # first of ties
                segs.append([start, pos])
                next_start = pos + silence
                if next_start < pos + cur:
                    start = next_start
                else:
                    triggered = False
            elif prev_end:
                segs.append([start, prev_end])
                if next_start < prev_end:
                    triggered = False
                else:
                    start = next_start
            else:
                segs.append([start, cur])
                triggered = False
                prev_end = next_start = temp_end = 0
                possible_ends = []
                continue
            prev_end = next_start = temp_end = 0
            possible_ends = []
        if p < neg and triggered:
            if not temp_end:
                temp_end = cur
            if not use_max and cur - temp_end > min_sil_max:
                prev_end = temp_end
            if cur - temp_end < min_silence:
                continue
            if temp_end - start > min_speech:
                segs.append([start, temp_end])
            triggered = False
            prev_end = next_start = temp_end = 0
            possible_ends = []
    if triggered and n_samples - start > min_speech:
        segs.append([start, n_samples])

    # Padding pass: gaps between kept segments are never negative, so // is
    # the same as C integer division here.
    for i, seg in enumerate(segs):
        if i == 0:
            seg[0] = max(0, seg[0] - pad)
        if i + 1 < len(segs):
            nxt = segs[i + 1]
            gap = nxt[0] - seg[1]
            if gap < 2 * pad:
                seg[1] += gap // 2
                nxt[0] = max(0, nxt[0] - gap // 2)
            else:
                seg[1] = min(n_samples, seg[1] + pad)
                nxt[0] = max(0, nxt[0] - pad)
        else:
            seg[1] = min(n_samples, seg[1] + pad)
    return [tuple(s) for s in segs]
