"""The bundled Danish model (models/hviske-tiny-da) really recognizes speech:
20 held-out utterances (voices, speeds and sentences never trained on), made
by the training pipeline's synthesizer, transcribed by the C engine with WER
<= 15 %; the C engine's greedy transcripts equal the PyTorch training
model's (train/model.py with the package's weights) on every clip. And it
holds up on what users say next (train/heldout_da.py): phrasings no training
template produces, single words and clips under a second, and the six
utterances users reported. The limits are the shipped model's level with
room for one clip per category to flip where the engine's arithmetic differs
(its SIMD kernels); the previous models (4.8 % hallucinated; 5.9 % WER; 9.4 %;
18.2 %, 75 % in one category, 16.1 % hallucinated, five of the six) and the
first (62.9 %, 21 %, none) fail them. On the full held-out set
(train/evaluate.py) the model meets 5 % overall; 10 % in every category and
1 % hallucinated wait for a better model (docs/models/hviske-tiny-da.md)."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

import testenv
from testenv import AUDIOC, BUNDLED_MODEL, ROOT

sys.path.insert(0, os.path.join(ROOT, "train"))
import export as X  # noqa: E402
import sentencepiece as spm  # noqa: E402
from evaluate import by_category, normalize, rates, score  # noqa: E402
from train import EOS, PROMPT_TEXT, read_wav  # noqa: E402

MODEL = os.environ.get("TINY_DA_MODEL", BUNDLED_MODEL)
WORK = testenv.work("tiny_da")
N, SEED, MAX_WER = 20, 777, 15.0
N_GEN, GEN_MAX_WER, GEN_MAX_CATEGORY_WER, GEN_MAX_HALLUCINATION = 8, 4.0, 37.5, 1.7   # per category; %
MIN_REPORTED = 6   # of the six reported utterances, heard exactly
TIE = 1e-3   # log-prob gap under which PyTorch's own choice is a coin toss (as in test_hviske_parity)


def tie_gap(net, pcm, prompt, c_ids, t_ids):
    """At the first step where the engine and PyTorch choose differently, how much
    PyTorch prefers its token over the engine's (teacher-forced on the shared prefix)."""
    i = next((k for k, (a, b) in enumerate(zip(c_ids, t_ids)) if a != b), min(len(c_ids), len(t_ids)))
    with torch.no_grad():
        mem, n3 = net.memory(pcm[None], torch.tensor([len(pcm)]))
        lp = net.decode(torch.tensor([prompt + t_ids[:i]]), mem, n3)[0, -1]
    c_next = c_ids[i] if i < len(c_ids) else EOS
    return float(lp.max() - lp[c_next])


def transcribe(files):
    """-> {file: (text, token ids)} from the C engine, greedy."""
    p = subprocess.run([AUDIOC, "transcribe", "--model", MODEL, "--format", "json", "--tokens", "--no-progress"]
                       + files, capture_output=True, text=True)
    assert p.returncode == 0, f"audioc transcribe exits 0 ({p.returncode}: {p.stderr[-500:]})"
    out = {}
    for line in p.stdout.splitlines():
        j = json.loads(line)
        out[j["file"]] = (j["text"], [t for s in j["segments"] for t in s["tokens"]])
    return out


def synthesized(split, n):
    """The clips of a held-out split (made by train/synth.py once): (files, manifest rows)."""
    data = os.path.join(WORK, split)
    if not os.path.exists(os.path.join(data, "manifest.jsonl")):
        subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "train", "synth.py"), data, "--split", split,
                        "-n", str(n), "--seed", str(SEED), "--jobs", "2"], check=True, capture_output=True)
    rows = [json.loads(line) for line in open(os.path.join(data, "manifest.jsonl"), encoding="utf-8")]
    return [os.path.join(data, r["audio"]) for r in rows], rows


def test_generalization(audioc):
    """Unseen phrasings, short clips and the reported utterances."""
    files, rows = synthesized("gen", N_GEN)
    refs, cats = [r["text"] for r in rows], [r["category"] for r in rows]
    out = transcribe(files)
    hyps = [out.get(f, ("", []))[0] for f in files]
    s, table = dict(score(refs, hyps), **rates(refs, hyps)), by_category(cats, refs, hyps)
    print(f"unseen phrasings, {len(files)} clips: WER {s['wer']:.1f} %, hallucinated {s['hallucination']:.1f} %")
    for c, x in table.items():
        print(f"  {c:16s} {x['clips']:3d} clips  WER {x['wer']:6.2f} %  hallucinated {x['hallucination']:5.1f} %")
        assert x["wer"] <= GEN_MAX_CATEGORY_WER, f"{c}: WER {x['wer']:.1f} % <= {GEN_MAX_CATEGORY_WER} %"
    for r, h, c in zip(refs, hyps, cats):
        if normalize(r) != normalize(h):
            print(f"  [{c}] ref: {r}\n  {' ' * (len(c) + 3)}hyp: {h}")
    right = sum(normalize(r) == normalize(h) for r, h, c in zip(refs, hyps, cats) if c == "reported")
    assert right >= MIN_REPORTED, f"{right} of the reported utterances heard exactly (want >= {MIN_REPORTED})"
    assert s["wer"] <= GEN_MAX_WER, f"unseen phrasings: WER {s['wer']:.1f} % <= {GEN_MAX_WER} %"
    assert s["hallucination"] <= GEN_MAX_HALLUCINATION, (
            f"unseen phrasings: {s['hallucination']:.1f} % hallucinated <= {GEN_MAX_HALLUCINATION} %")


@pytest.fixture(scope="module")
def held_out(audioc):
    """The held-out clips, their manifest rows and the C engine's greedy transcripts."""
    files, rows = synthesized("eval", N)
    return files, rows, transcribe(files)


def test_wer(held_out):
    """The C engine's WER on the held-out clips is at most MAX_WER."""
    files, rows, out = held_out
    refs = [r["text"] for r in rows]
    hyps = [out.get(f, ("", []))[0] for f in files]
    s = score(refs, hyps)
    print(f"C engine, greedy, {len(files)} held-out clips: WER {s['wer']:.1f} %, CER {s['cer']:.1f} % "
          f"(as written: WER {s['wer_raw']:.1f} %, CER {s['cer_raw']:.1f} %)")
    for r, h in zip(refs, hyps):
        if normalize(r) != normalize(h):
            print(f"  ref: {r}\n  hyp: {h}")
    assert s["wer"] <= MAX_WER, f"WER {s['wer']:.1f} % <= {MAX_WER} %"



def test_pytorch_equals_c(held_out):
    """The C engine's greedy transcripts equal the PyTorch training model's, but at proven near-ties."""
    files, rows, out = held_out
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
        assert text == c_text, f"{os.path.basename(f)}: PyTorch '{text}' == C '{c_text}'"
        same += 1
    print(f"PyTorch and C greedy transcripts equal on {same}/{len(files)} clips")

