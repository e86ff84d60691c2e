#!/usr/bin/python3
"""Pick the bundled sample clips: held-out utterances (voices, speeds and
sentences never trained on) that the shipped model transcribes exactly,
one of each kind (clock time, date, number, everyday sentence), saved as
16 kHz FLAC with a samples/README.md listing what is said.

usage: make_samples.py --model PKG --data EVAL_DIR --out samples/ [--audioc build/audioc]
"""
import argparse
import json
import os
import subprocess

KINDS = [("time", lambda t: "lokken" in t), ("date", lambda t: " den " in t and "dag" in t),
         ("number", lambda t: "hundrede" in t or "tusind" in t), ("sentence", lambda t: True)]


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--audioc", default=os.path.join(here, "..", "build", "audioc"))
    a = ap.parse_args()
    rows = [json.loads(line) for line in open(os.path.join(a.data, "manifest.jsonl"), encoding="utf-8")]
    rows = [r for r in rows if 2.0 <= r["duration"] <= 5.0][:80]
    files = [os.path.join(a.data, r["audio"]) for r in rows]
    p = subprocess.run([a.audioc, "transcribe", "--model", a.model, "--format", "json", "--no-progress"] + files,
                       capture_output=True, text=True, check=True)
    hyp = {json.loads(line)["file"]: json.loads(line)["text"] for line in p.stdout.splitlines()}
    os.makedirs(a.out, exist_ok=True)
    chosen, voices = [], set()
    for kind, want in KINDS:
        for r, f in zip(rows, files):
            if hyp.get(f) == r["text"] and want(r["text"]) and r["voice"] not in voices and r not in chosen:
                chosen.append(r)
                voices.add(r["voice"])
                name = f"da_{len(chosen):02d}_{kind}.flac"
                subprocess.run(["sox", f, os.path.join(a.out, name)], check=True)
                r["file"] = name
                break
    with open(os.path.join(a.out, "README.md"), "w", encoding="utf-8") as fo:
        fo.write("# Sample clips\n\nDanish speech synthesized by `train/` (espeak-ng) with voices, speeds and "
                 "sentences that the bundled model (`models/hviske-tiny-da`) never saw in training.\n\n"
                 "| file | what is said | voice | words/min |\n|---|---|---|---|\n")
        for r in chosen:
            fo.write(f"| `{r['file']}` | {r['text']} | {r['voice']} | {r['speed']} |\n")
    for r in chosen:
        print(r["file"], r["text"])


if __name__ == "__main__":
    main()
