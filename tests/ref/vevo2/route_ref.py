#!/usr/bin/python3
"""Vevo2's style-preserved conversion (spec vevo2.md §3 path S, Amphion
inference_fm) in PyTorch, end to end, from the parts' references: 24 kHz
source and target -> torchaudio's resampler to 16 kHz -> Whisper features;
the pitch-shifted source's chromagram; content-style ids; the target's
timbre mel; the FM sampler on the target's ids then the source's, from the
given noise; the vocoder.

convert() returns every intermediate, so a test can tell which stage
differs; IDS given to it replace the computed ids (to go on past a VQ
near-tie the C code resolved the other way).
"""
import os
import sys

import numpy as np
import torch
import torchaudio

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import chroma_ref  # noqa: E402
import coco_ref  # noqa: E402
import fm_ref  # noqa: E402
import pitch_ref  # noqa: E402
import timbre_mel_ref  # noqa: E402
import vocoder_ref  # noqa: E402
import whisper_ref  # noqa: E402

FM_DIR = fm_ref.FM_PATH


class Package:
    def __init__(self, root, whisper=None):
        self.root = root
        self.cfg = vocoder_ref.read_relaxed_json(os.path.join(root, FM_DIR, "config.json"))
        self.pre = self.cfg["preprocess"]
        self.coco = self.cfg["model"]["coco"]
        self.state, self.dims = whisper_ref.load_state(whisper or os.path.join(root, "whisper-medium"))
        st = fm_ref.st_io.load(os.path.join(root, FM_DIR, "whisper_stats.safetensors"))
        self.mean, self.std = st["mean"].astype(np.float32), st["std"].astype(np.float32)
        self.fm = fm_ref.FM(os.path.join(root, FM_DIR))

    def content_style(self, x, shift):
        """ids, gaps and the stages before them of 24 kHz audio X, its chroma shifted by SHIFT."""
        hop, rate = self.pre["hop_size"], self.pre["sample_rate"]
        T = len(x) // hop
        x16 = torchaudio.functional.resample(torch.from_numpy(x), rate, 16000).numpy()
        mel = whisper_ref.log_mel(x16, self.dims["n_mels"], self.dims["n_audio_ctx"])
        with torch.no_grad():
            enc = whisper_ref.encode(self.state, self.dims, mel)
        feat = whisper_ref.features(enc, T, self.mean, self.std)
        y = pitch_ref.pitch_shift(x, rate, shift) if shift else x
        chroma, tuning, _ = chroma_ref.vevo2_chroma(np.asarray(y, np.float32), T, sr=rate,
                                                    n_fft=self.pre["n_fft"], hop=hop,
                                                    n_chroma=self.coco["chromagram_dim"])
        path = os.path.join(self.root, coco_ref.FILES["coco_content_style"])
        _, ids, gaps = coco_ref.coco_encode(path, self.coco, feat, np.ascontiguousarray(chroma, np.float32))
        return {"x16": x16, "feat": feat, "chroma": chroma, "tuning": tuning, "ids": ids, "gaps": gaps}

    def synthesize(self, cond_ids, timbre, noise, steps):
        """(prompt mel, mel, wav): the FM on COND_IDS continuing TIMBRE's mel from NOISE, then the vocoder."""
        prompt = timbre_mel_ref.timbre_mel(timbre, self.pre)
        with torch.no_grad():
            cond = self.fm.cond(torch.from_numpy(np.asarray(cond_ids, np.int64)))
            F = cond.shape[0] - prompt.shape[0]
            mel = self.fm.sample(cond, torch.from_numpy(prompt),
                                 torch.from_numpy(np.asarray(noise, np.float32).reshape(F, -1)), steps)
        mel = mel.numpy() if torch.is_tensor(mel) else mel
        return prompt, mel, vocoder_ref.vocoder(os.path.join(self.root, "vocoder"), mel)

    def convert(self, src, tgt, shift, noise, steps=32, ids=None):
        s = self.content_style(src, shift)
        t = self.content_style(tgt, 0)
        cond_ids = ids if ids is not None else np.concatenate([t["ids"], s["ids"]])
        prompt, mel, wav = self.synthesize(cond_ids, tgt, noise, steps)
        return {"src": s, "tgt": t, "prompt": prompt, "cond_ids": cond_ids, "mel": mel, "wav": wav}

    def frames(self, n_src, n_tgt):
        """F, the frames the conversion of clips of these lengths makes (spec §1)."""
        hop, rate = self.pre["hop_size"], self.coco["downsample_rate"]
        tokens = lambda n: -(-(n // hop) // rate)  # noqa: E731
        return rate * (tokens(n_src) + tokens(n_tgt)) - n_tgt // hop
