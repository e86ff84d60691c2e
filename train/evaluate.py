#!/usr/bin/python3
"""WER / CER of a cohere_asr package on a held-out manifest, decoded by the C engine.

usage: evaluate.py --model PKG --data DIR [--audioc build/audioc] [--beams 1,4] [--limit N]
                   [--ckpt CKPT.pt --torch-n 8] [--report out.json]
                   [--max-wer W] [--max-category-wer C] [--max-hallucination H]

For each beam size the engine (`audioc transcribe --format json --tokens`) transcribes every
clip. Scores (own Levenshtein distance, no external packages):
- wer / cer: after normalization (lower case, punctuation removed, whitespace collapsed);
  the headline numbers, as usual for ASR;
- wer_raw / cer_raw: on the orthographic text as written (capitals and punctuation count),
  which measures the <|pnc|> behaviour too;
- hallucination: % of clips whose (normalized) transcript is not empty and shares no word with
  the reference; empty: % of clips with an empty transcript (counted apart);
- per category (manifest "category", the heldout_da.py set): clips, wer, cer, hallucination,
  empty; printed as a table. Clips of category "reported" are listed with their transcripts.
--max-* state targets; each beam size's report says which are met (the exit status does not).
--ckpt also runs the PyTorch model's greedy decoding on the first --torch-n clips and
checks that its token ids equal the engine's greedy ids (export / front-end parity).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def edit_distance(a, b):
    """Levenshtein distance between two sequences (one row of the DP table at a time)."""
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        cur = [i]
        for j, y in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y)))
        prev = cur
    return prev[-1]


def normalize(s):
    s = re.sub(r"[^\w\s]", " ", s.lower())
    return " ".join(s.split())


def score(refs, hyps):
    out = {}
    for tag, f in (("", normalize), ("_raw", lambda s: " ".join(s.split()))):
        we = wn = ce = cn = 0
        for r, h in zip(refs, hyps):
            r, h = f(r), f(h)
            we += edit_distance(r.split(), h.split())
            wn += len(r.split())
            ce += edit_distance(r, h)
            cn += len(r)
        out["wer" + tag] = round(100.0 * we / max(1, wn), 3)
        out["cer" + tag] = round(100.0 * ce / max(1, cn), 3)
    return out


def hallucinated(ref, hyp):
    h = normalize(hyp).split()
    return bool(h) and not set(h) & set(normalize(ref).split())


def rates(refs, hyps):
    n = max(1, len(refs))
    return {"hallucination": round(100.0 * sum(hallucinated(r, h) for r, h in zip(refs, hyps)) / n, 2),
            "empty": round(100.0 * sum(not normalize(h) for h in hyps) / n, 2)}


def by_category(cats, refs, hyps):
    out = {}
    for c in sorted(set(cats), key=cats.index):
        idx = [i for i, x in enumerate(cats) if x == c]
        r, h = [refs[i] for i in idx], [hyps[i] for i in idx]
        s = score(r, h)
        out[c] = {"clips": len(idx), "wer": s["wer"], "cer": s["cer"], **rates(r, h)}
    return out


def print_table(s, cats):
    print(f"  {'category':16s} {'clips':>5s} {'WER %':>7s} {'CER %':>7s} {'halluc. %':>9s} {'empty %':>7s}")
    for c, x in cats.items() if list(cats) != ["all"] else ():
        print(f"  {c:16s} {x['clips']:5d} {x['wer']:7.2f} {x['cer']:7.2f} {x['hallucination']:9.2f} {x['empty']:7.2f}")
    print(f"  {'all':16s} {sum(x['clips'] for x in cats.values()):5d} {s['wer']:7.2f} {s['cer']:7.2f} "
          f"{s['hallucination']:9.2f} {s['empty']:7.2f}")


def targets(s, a):
    out = {}
    if a.max_wer is not None:
        out[f"wer <= {a.max_wer}"] = s["wer"] <= a.max_wer
    if a.max_category_wer is not None:
        out[f"every category wer <= {a.max_category_wer}"] = all(
            x["wer"] <= a.max_category_wer for x in s["categories"].values())
    if a.max_hallucination is not None:
        out[f"hallucination <= {a.max_hallucination}"] = s["hallucination"] <= a.max_hallucination
    return out


def run_engine(audioc, model, files, beams, threads, chunk=200):
    res = {}
    for k in range(0, len(files), chunk):
        cmd = [audioc, "transcribe", "--model", model, "--format", "json", "--tokens", "--no-progress",
               "-t", str(threads)] + (["--beam-size", str(beams)] if beams > 1 else []) + files[k:k + chunk]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            sys.exit(f"audioc failed ({p.returncode}): {p.stderr[-2000:]}")
        for line in p.stdout.splitlines():
            j = json.loads(line)
            segs = j["segments"]
            res[j["file"]] = (j["text"], [t for s in segs for t in s.get("tokens", [])],
                              segs[0]["avg_logprob"] if len(segs) == 1 else None)
    return [res[f] for f in files]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--audioc", default=os.path.join(HERE, "..", "build", "audioc"))
    ap.add_argument("--beams", default="1,4")
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--ckpt", default="")
    ap.add_argument("--torch-n", type=int, default=8)
    ap.add_argument("--report", default="")
    ap.add_argument("--show", type=int, default=5, help="print this many example errors")
    ap.add_argument("--max-wer", type=float, default=None, help="target: overall WER %%")
    ap.add_argument("--max-category-wer", type=float, default=None, help="target: WER %% of every category")
    ap.add_argument("--max-hallucination", type=float, default=None, help="target: hallucination %%")
    a = ap.parse_args()

    rows = [json.loads(l) for l in open(os.path.join(a.data, "manifest.jsonl"), encoding="utf-8")]
    if a.limit:
        rows = rows[:a.limit]
    files = [os.path.join(a.data, r["audio"]) for r in rows]
    refs = [r["text"] for r in rows]
    cats = [r.get("category", "all") for r in rows]
    audio_s = sum(r["duration"] for r in rows)
    report = {"model": a.model, "data": a.data, "utterances": len(rows), "audio_s": round(audio_s, 1),
              "voices": sorted({r["voice"] for r in rows}),
              "speeds": [min(r["speed"] for r in rows), max(r["speed"] for r in rows)]}
    greedy_ids = None
    for b in [int(x) for x in a.beams.split(",")]:
        t0 = time.time()
        out = run_engine(a.audioc, a.model, files, b, a.threads)
        dt = time.time() - t0
        hyps = [o[0] for o in out]
        s = {**score(refs, hyps), **rates(refs, hyps)}
        s["seconds"] = round(dt, 1)
        s["x_realtime"] = round(audio_s / dt, 1)
        print(f"beams {b}: {json.dumps(s)}", flush=True)
        s["categories"] = by_category(cats, refs, hyps)
        print_table(s, s["categories"])
        s["reported"] = [{"ref": r["text"], "hyp": h, "voice": r["voice"], "speed": r["speed"]}
                         for r, h in zip(rows, hyps) if r.get("category") == "reported"]
        for x in s["reported"]:
            print(f"  reported ({x['voice'] or 'da'}, {x['speed']}): {x['ref']!r} -> {x['hyp']!r}")
        s["targets"] = targets(s, a)
        for k, ok in s["targets"].items():
            print(f"  target {k}: {'met' if ok else 'MISSED'}")
        report[f"beam{b}"] = s
        if b == 1:
            greedy_ids, greedy_lp = [o[1] for o in out], [o[2] for o in out]
            bad = [(r, h) for r, h in zip(refs, hyps) if normalize(r) != normalize(h)]
            for r, h in bad[:a.show]:
                print(f"  ref: {r}\n  hyp: {h}")
    if a.ckpt and greedy_ids is not None:
        import numpy as np
        import torch
        sys.path.insert(0, HERE)
        import export as X
        from train import PROMPT_TEXT, read_wav
        import sentencepiece as spm
        torch.set_num_threads(a.threads)
        net, ck = X.load_ckpt(a.ckpt)
        sp = spm.SentencePieceProcessor(model_file=os.path.join(a.model, "tokenizer.model"))
        prompt = sp.encode(PROMPT_TEXT)
        same, max_lp_diff = 0, 0.0
        n = min(a.torch_n, len(files))
        for k in range(n):
            pcm = read_wav(files[k]).astype(np.float32) / 32768.0
            ids = net.greedy(torch.from_numpy(pcm)[None], torch.tensor([len(pcm)]), prompt, 3,
                             max_new=net.dims["dec_max_len"] - len(prompt))[0]
            ok = ids == greedy_ids[k]
            same += ok
            if greedy_lp[k] is not None:  # engine avg_logprob = mean log-prob of tokens + eos
                with torch.no_grad():
                    mem, n3 = net.memory(torch.from_numpy(pcm)[None], torch.tensor([len(pcm)]))
                    seq = prompt + greedy_ids[k] + [3]
                    lp = net.decode(torch.tensor([seq[:-1]]), mem, n3)[0, len(prompt) - 1:]
                    mean = float(lp.gather(1, torch.tensor(seq[len(prompt):])[:, None]).mean())
                max_lp_diff = max(max_lp_diff, abs(mean - greedy_lp[k]))
            if not ok:
                print(f"  torch/engine differ on {files[k]}:\n    torch  {ids}\n    engine {greedy_ids[k]}")
        report["torch_engine_greedy_equal"] = f"{same}/{n}"
        report["torch_engine_max_avg_logprob_diff"] = max_lp_diff
        print(f"PyTorch vs engine greedy ids equal on {same}/{n} clips; "
              f"max |avg log-prob difference| {max_lp_diff:.2e}")
    if a.report:
        with open(a.report, "w") as f:
            json.dump(report, f, indent=2, ensure_ascii=False)


if __name__ == "__main__":
    main()
