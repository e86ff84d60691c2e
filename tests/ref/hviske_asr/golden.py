#!/usr/bin/python3
"""Run the cohere_asr reference on a 16 kHz WAV and dump golden tensors + result.json.

usage: golden.py --model DIR --audio WAV --out OUTDIR [--beams 3] [--length-penalty 1.0]
                 [--max-new-tokens N] [--language da] [--no-punctuation] [--prompt9]
                 [--temperature 0.8 --top-k 20 --top-p 0.9] [--precision f64|f32]

Files (float32, np.save, C order), all for the first chunk (`tensors_chunk` = 0):
  features.npy [T_feat, n_mels] time-major, frames >= T_valid are zero
  subsampling.npy [T3, d_model]; layer_{i}.npy [T3, d_model] (after norm_out);
  encoder_proj.npy [T3, D]  -- rows >= T3_valid are padding: compare rows < T3_valid only
  prefill_logprobs.npy [V]  log-probs of the first token after the prompt
  sampling_probs.npy [V]    the top-k / temperature / top-p distribution of that first step
result.json: prompt, lengths, greedy / beam ids + texts + margins, per-chunk spans, timings.
"""
import argparse
import json
import os
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cohere_ref as ref  # noqa: E402


def save(outdir, name, t):
    np.save(os.path.join(outdir, name + ".npy"), np.ascontiguousarray(t.detach().numpy(), dtype=np.float32))


def run_chunk(model, wave, prompt, a, max_new, keep=None):
    """Frontend + encoder + greedy + beam for one chunk; returns (json dict, decoder, timings)."""
    cfg, tok = model.cfg, model.tok
    t0 = time.perf_counter()
    enc, t_valid, n3 = model.encode(wave, keep)
    t1 = time.perf_counter()
    dec = model.decoder(enc, n3)
    g_ids, margins, g_logp = ref.greedy(dec, prompt, max_new, cfg.eos_id)
    t2 = time.perf_counter()
    beam = ref.beam_search(dec, prompt, max_new, cfg.eos_id, a.beams, a.length_penalty)
    t3 = time.perf_counter()
    info = {
        "n_samples": int(len(wave)), "T_valid": t_valid, "T3": int(enc.shape[0]), "T3_valid": n3,
        "greedy_ids": g_ids, "greedy_text": tok.decode(g_ids),
        "greedy_stopped_on_eos": len(margins) > len(g_ids),
        # one entry per greedy step (incl. the step that chose EOS): logp(top1) - logp(top2)
        "greedy_margins": margins, "greedy_min_margin": min(margins) if margins else None,
        "greedy_logprobs": g_logp,
        "beam_ids": beam["ids"], "beam_text": tok.decode(beam["ids"]),
        "beam_score": beam["score"], "beam_length": beam["length"],
        "beam_normalized_score": beam["normalized_score"],
        # smallest score gap between neighbouring ranked candidates over all beam steps
        "beam_min_gap": beam["min_gap"],
    }
    timings = {"encode_s": t1 - t0, "greedy_s": t2 - t1, "beam_s": t3 - t2}
    return info, enc, n3, dec, timings


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--audio", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--beams", type=int, default=3)
    ap.add_argument("--length-penalty", type=float, default=1.0)
    ap.add_argument("--max-new-tokens", type=int, default=None,
                    help="default min(256, max_sequence_length - prompt length)")
    ap.add_argument("--language", default="da")
    ap.add_argument("--no-punctuation", action="store_true")
    ap.add_argument("--prompt9", action="store_true", help="9-token prompt (no leading '▁')")
    ap.add_argument("--temperature", type=float, default=0.8)
    ap.add_argument("--top-k", type=int, default=20)
    ap.add_argument("--top-p", type=float, default=0.9)
    ap.add_argument("--precision", choices=("f64", "f32"), default="f64",
                    help="compute precision of the reference (weights are widened from the file dtype)")
    a = ap.parse_args()
    torch.set_num_threads(1)

    t_start = time.perf_counter()
    dtype = torch.float64 if a.precision == "f64" else torch.float32
    model = ref.Model(a.model, dtype)
    cfg, tok = model.cfg, model.tok
    if a.language not in cfg.supported_languages:
        sys.exit(f"golden: language {a.language!r} not in supported_languages {cfg.supported_languages}")
    wave = ref.read_wav(a.audio, cfg.sample_rate)
    prompt = tok.prompt(a.language, not a.no_punctuation, not a.prompt9)
    max_new = ref.max_new_tokens_for(cfg, len(prompt), a.max_new_tokens)
    spans = ref.split_audio(wave, cfg)
    os.makedirs(a.out, exist_ok=True)

    chunks, timings = [], []
    for ci, (s, e) in enumerate(spans):
        keep = {} if ci == 0 else None
        info, enc, n3, dec, tm = run_chunk(model, wave[s:e], prompt, a, max_new, keep)
        info = {"start": s, "end": e, **info}
        chunks.append(info)
        timings.append(tm)
        if ci == 0:
            save(a.out, "features", keep["features"].t())
            save(a.out, "subsampling", keep["subsampling"])
            for i in range(cfg.n_layers):
                save(a.out, f"layer_{i}", keep[f"layer_{i}"])
            save(a.out, "encoder_proj", keep["encoder_proj"])
            head = dec.head_output(prompt)
            logp = head if cfg.head_log_softmax else torch.log_softmax(head, dim=-1)
            save(a.out, "prefill_logprobs", logp)
            probs = ref.sampling_distribution(head.numpy(), a.temperature, a.top_k, a.top_p)
            np.save(os.path.join(a.out, "sampling_probs.npy"), probs.astype(np.float32))
            first = {"T_feat": int(keep["features"].shape[1]), "n_kept": int((probs > 0).sum())}

    c0 = chunks[0]
    margins = [m for c in chunks for m in c["greedy_margins"]]
    result = {
        "audio": os.path.basename(a.audio), "n_samples": int(len(wave)), "sample_rate": cfg.sample_rate,
        "precision": a.precision, "weights_dtypes": sorted(set(model.file_dtypes.values())),
        "has_frontend_tensors": model.fb is not None,
        "language": a.language, "punctuation": not a.no_punctuation, "prompt_leading_space": not a.prompt9,
        "prompt_ids": prompt, "eos_id": cfg.eos_id, "max_new_tokens": max_new,
        "beams": a.beams, "length_penalty": a.length_penalty,
        "sampling": {"temperature": a.temperature, "top_k": a.top_k, "top_p": a.top_p,
                     "n_kept": first["n_kept"]},
        # The .npy tensors and the T_* values below belong to chunk 0.
        "tensors_chunk": 0, "T_feat": first["T_feat"], "T_valid": c0["T_valid"], "T3": c0["T3"],
        "T3_valid": c0["T3_valid"], "n_layers": cfg.n_layers,
        "chunked": len(spans) > 1, "chunk_spans": [[c["start"], c["end"]] for c in chunks],
        # Whole clip: ids concatenated over chunks, texts joined per §5.
        "greedy_ids": [t for c in chunks for t in c["greedy_ids"]],
        "greedy_text": ref.join_texts([c["greedy_text"] for c in chunks], a.language),
        "greedy_min_margin": min(margins) if margins else None,
        "greedy_margins": c0["greedy_margins"],
        "beam_ids": [t for c in chunks for t in c["beam_ids"]],
        "beam_text": ref.join_texts([c["beam_text"] for c in chunks], a.language),
        "beam_normalized_score": c0["beam_normalized_score"],
        "beam_min_gap": min(c["beam_min_gap"] for c in chunks),
        "chunks": chunks,
        "timings_s": {"total": time.perf_counter() - t_start,
                      "encode": sum(t["encode_s"] for t in timings),
                      "greedy": sum(t["greedy_s"] for t in timings),
                      "beam": sum(t["beam_s"] for t in timings)},
    }
    with open(os.path.join(a.out, "result.json"), "w", encoding="utf-8") as f:
        json.dump(result, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(f"golden: {len(spans)} chunk(s), greedy {len(result['greedy_ids'])} ids "
          f"(min margin {result['greedy_min_margin']:.4g}), beam {len(result['beam_ids'])} ids, "
          f"{result['timings_s']['total']:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
