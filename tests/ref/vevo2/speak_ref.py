#!/usr/bin/python3
"""Vevo2's path A (spec vevo2.md §3, Amphion inference_ar_and_fm) in
PyTorch on the parts' references: the route table and its reference
fallbacks as §3 states them, the prosody tokens (chromagram shifted and
stretched by F.interpolate), the style's content-style tokens, the prompt
of §4.6, HF generate over tests/ref/qwen2's Qwen2, the parsed ids, then the
FM on the timbre's ids and those, from the given noise, and the vocoder.

speak() returns every intermediate; given prompt ids (the C side's, which
the tokenizer test checks against Hugging Face) it runs the AR from them.
"""
import json
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "qwen2"))
import ar_ref  # noqa: E402
import byte_decode  # noqa: E402
import chroma_ref  # noqa: E402
import coco_ref  # noqa: E402
import pitch_ref  # noqa: E402
import qwen2_ref  # noqa: E402
import route_ref  # noqa: E402

# spec §3: path, use_prosody_code, use_pitch_shift; which audio stands in for a missing reference
ROUTES = {
    "zero_shot_tts": dict(prosody=False, pitch=False, style="voice"),
    "text_to_singing": dict(prosody=False, pitch=False, style="voice"),
    "svs": dict(prosody=False, pitch=False, style="voice"),
    "style_converted_vc": dict(prosody=True, pitch=False, timbre="prosody"),
    "style_converted_svc": dict(prosody=True, pitch=True, timbre="prosody"),
    "editing": dict(prosody=True, pitch=False, timbre="prosody", style="prosody"),
    "singing_style_conversion": dict(prosody=True, pitch=True, timbre="prosody"),
    "humming_to_singing": dict(prosody=True, pitch=True),
    "instrument_to_singing": dict(prosody=True, pitch=True),
}


def references(route, source=None, voice=None, style=None, prosody=None, use_prosody=None, texts=None):
    """(timbre, style, prosody) clips the route uses (None when it uses none), whether it
    uses the prosody code, and the transcript of the style (TEXTS: style, voice, source)."""
    r, texts = ROUTES[route], texts or {}
    use_prosody = r["prosody"] if use_prosody is None else use_prosody
    prosody = prosody if prosody is not None else source
    style_text = texts.get("style")
    if style is None:
        # the target voice is the style of speech from text when its transcript is known
        style = {"voice": voice if texts.get("voice") else None, "prosody": prosody}.get(r.get("style"))
        style_text = {"voice": texts.get("voice"), "prosody": texts.get("source")}.get(r.get("style"))
    timbre = voice if voice is not None else (prosody if r.get("timbre") == "prosody" else source)
    return timbre, style, (prosody if use_prosody else None), use_prosody, (style_text if style is not None else "")


class Speaker(route_ref.Package):
    def __init__(self, root):
        super().__init__(root)
        self.ar_dir = os.path.join(root, ar_ref.AR_DIR)
        self.ar = qwen2_ref.Qwen2(self.ar_dir)
        self.prosody_cfg = coco_ref.configs(root)["coco_style"]
        with open(os.path.join(self.ar_dir, "tokenizer.json"), encoding="utf-8") as f:
            self.tok = json.load(f)
        self.added = {t["content"]: t["id"] for t in self.tok["added_tokens"]}

    def prosody(self, x, shift, ratio=1.0):
        """Prosody ids (and gaps) of 24 kHz X, its chroma shifted by SHIFT, stretched by RATIO."""
        hop, rate = self.pre["hop_size"], self.pre["sample_rate"]
        T = len(x) // hop
        y = pitch_ref.pitch_shift(x, rate, shift) if shift else x
        chroma, _, _ = chroma_ref.vevo2_chroma(np.asarray(y, np.float32), T, sr=rate, n_fft=self.pre["n_fft"],
                                               hop=hop, n_chroma=self.prosody_cfg["chromagram_dim"])
        chroma = np.ascontiguousarray(chroma, np.float32)
        if ratio != 1.0:
            with torch.no_grad():
                chroma = torch.nn.functional.interpolate(torch.from_numpy(chroma).T[None], size=int(T * ratio),
                                                         mode="linear", align_corners=False)[0].T.numpy()
            chroma = np.ascontiguousarray(chroma, np.float32)
        path = os.path.join(self.root, coco_ref.FILES["coco_style"])
        _, ids, gaps = coco_ref.coco_encode(path, self.prosody_cfg, None, chroma)
        return {"ids": ids, "gaps": gaps}

    def decode(self, ids):
        """The continuation's text, special tokens kept."""
        return byte_decode.decode(self.tok, ids)

    def speak(self, route, text, texts=None, source=None, voice=None, style=None, prosody=None,
              use_prosody=None, shift=0, style_shift=0, target_duration=None, gen=None, prompt_ids=None,
              noise=None, steps=32, timbre=None):
        """Every stage of path A; TEXTS the transcripts {style, voice, source}; GEN the sampler case
        of qwen2_ref.generate ({penalty, min_new, temperature, top_k, top_p, max_new}); TIMBRE the
        timbre clip instead of the route's (trimmed to a reference duration)."""
        route_timbre, style, prosody, use_prosody, style_text = references(route, source, voice, style, prosody,
                                                                           use_prosody, texts)
        timbre = route_timbre if timbre is None else timbre
        out = {"timbre_clip": timbre, "style_text": style_text}
        p_ids = []
        if use_prosody:
            if style is not None:
                out["style_prosody"] = self.prosody(style, style_shift)
                p_ids += list(out["style_prosody"]["ids"])
            ratio = target_duration / (len(prosody) / 24000) if target_duration else 1.0
            out["prosody"] = self.prosody(prosody, shift, ratio)
            p_ids += list(out["prosody"]["ids"])
        out["prosody_ids"] = np.asarray(p_ids, np.int32)
        s_ids = []
        if style is not None:
            out["style"] = self.content_style(style, style_shift)
            s_ids = list(out["style"]["ids"])
        out["style_ids"] = np.asarray(s_ids, np.int32)
        out["timbre"] = self.content_style(timbre, 0)
        out["prompt"] = ar_ref.prompt_text(use_prosody, style_text, text, p_ids, s_ids)
        if prompt_ids is None or gen is None:
            return out
        c = dict(gen, step=0)
        ids, margins = qwen2_ref.generate(self.ar, [int(i) for i in prompt_ids], c, [self.added["<|im_end|>"]],
                                          gen["max_new"])
        out["generated_ids"], out["margins"] = np.asarray(ids, np.int32), margins
        out["ids"] = np.asarray(ar_ref.parse_content_style(self.decode(ids)), np.int32)
        if noise is None:
            return out
        out["wav"] = self.synthesize(np.concatenate([out["timbre"]["ids"], out["ids"]]), timbre, noise, steps)[2]
        return out

    def frames_for(self, n_timbre, n_ids):
        """F of a request whose timbre clip has N_TIMBRE samples and whose AR made N_IDS ids."""
        hop, rate = self.pre["hop_size"], self.coco["downsample_rate"]
        return rate * (-(-(n_timbre // hop) // rate) + n_ids) - n_timbre // hop
