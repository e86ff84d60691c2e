#!/usr/bin/python3
"""The bundled Danish model (models/hviske-tiny-da) really recognizes speech:
20 held-out utterances (voices, speeds and sentences never trained on), made
by the training pipeline's synthesizer, transcribed by the C engine with WER
<= 15 %; and the C engine's greedy transcripts equal the PyTorch training
model's (train/model.py with the package's weights) on every clip."""
import json
import os
import subprocess
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "train"))
sys.path.insert(0, os.path.join(ROOT, "tests", "cli"))
import export as X  # noqa: E402
import sentencepiece as spm  # noqa: E402
from common import BUNDLED_MODEL, Checker  # noqa: E402
from evaluate import normalize, score  # noqa: E402
from train import EOS, PROMPT_TEXT, read_wav  # noqa: E402

AUDIOC = os.environ["AUDIOC"]
MODEL = os.environ.get("TINY_DA_MODEL", BUNDLED_MODEL)
WORK = os.path.join(os.environ["TEST_WORK"], "tiny_da")
N, SEED, MAX_WER = 20, 777, 15.0
TIE = 1e-3   # log-prob gap under which PyTorch's own choice is a coin toss (as in test_hviske_parity)
check = Checker()


def tie_gap(net, pcm, prompt, c_ids, t_ids):
    """At the first step where the engine and PyTorch choose differently, how much
    PyTorch prefers its token over the engine's (teacher-forced on the shared prefix)."""
    i = next((k for k, (a, b) in enumerate(zip(c_ids, t_ids)) if a != b), min(len(c_ids), len(t_ids)))
    with torch.no_grad():
        mem, n3 = net.memory(pcm[None], torch.tensor([len(pcm)]))
        lp = net.decode(torch.tensor([prompt + t_ids[:i]]), mem, n3)[0, -1]
    c_next = c_ids[i] if i < len(c_ids) else EOS
    return float(lp.max() - lp[c_next])


def main():
    data = os.path.join(WORK, "eval")
    if not os.path.exists(os.path.join(data, "manifest.jsonl")):
        subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "train", "synth.py"), data, "--split", "eval",
                        "-n", str(N), "--seed", str(SEED), "--jobs", "2"], check=True, capture_output=True)
    rows = [json.loads(line) for line in open(os.path.join(data, "manifest.jsonl"), encoding="utf-8")]
    files = [os.path.join(data, r["audio"]) for r in rows]
    refs = [r["text"] for r in rows]

    p = subprocess.run([AUDIOC, "transcribe", "--model", MODEL, "--format", "json", "--tokens", "--no-progress"]
                       + files, capture_output=True, text=True)
    check(p.returncode == 0, f"audioc transcribe exits 0 ({p.returncode}: {p.stderr[-500:]})")
    out = {}
    for line in p.stdout.splitlines():
        j = json.loads(line)
        out[j["file"]] = (j["text"], [t for s in j["segments"] for t in s["tokens"]])
    hyps = [out.get(f, ("", []))[0] for f in files]
    s = score(refs, hyps)
    print(f"C engine, greedy, {len(files)} held-out clips: WER {s['wer']:.1f} %, CER {s['cer']:.1f} % "
          f"(as written: WER {s['wer_raw']:.1f} %, CER {s['cer_raw']:.1f} %)")
    for r, h in zip(refs, hyps):
        if normalize(r) != normalize(h):
            print(f"  ref: {r}\n  hyp: {h}")
    check(s["wer"] <= MAX_WER, f"WER {s['wer']:.1f} % <= {MAX_WER} %")

    torch.set_num_threads(2)
    net = X.load_package(MODEL)
    sp = spm.SentencePieceProcessor(model_file=os.path.join(MODEL, "tokenizer.model"))
    prompt = sp.encode(PROMPT_TEXT)
    same = 0
    for f in files:
        pcm = torch.from_numpy(read_wav(f).astype(np.float32) / 32768.0)
        ids = net.greedy(pcm[None], torch.tensor([len(pcm)]), prompt, EOS,
                         max_new=net.dims["dec_max_len"] - len(prompt))[0]
        text = sp.decode(ids).strip()
        c_text, c_ids = out.get(f, ("", []))
        if text != c_text:
            gap = tie_gap(net, pcm, prompt, c_ids, ids)
            if gap < TIE:
                print(f"note: {os.path.basename(f)}: PyTorch and C part at a near-tie (gap {gap:.1e})")
                continue
        same += check(text == c_text, f"{os.path.basename(f)}: PyTorch '{text}' == C '{c_text}'")
    print(f"PyTorch and C greedy transcripts equal on {same}/{len(files)} clips")
    return check.finish()


if __name__ == "__main__":
    sys.exit(main())
