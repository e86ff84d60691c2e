#!/usr/bin/python3
"""Train the small cohere_asr model on a synth.py manifest.

usage: train.py --data DIR --tokenizer tokenizer.model --out DIR [--steps N] [--budget-min M]
                [--batch-sec 90] [--lr 1.5e-3] [--warmup 800] [--seed 1234] [--dims '{json}']

Teacher forcing with the 10-token Danish prompt (spec §4.4, identical to Hviske's):
input  = ▁ <|startofcontext|> ... <|nodiarize|> t1 .. tn
target = (prompt positions ignored)               t1 .. tn <|endoftext|>
Loss = label-smoothed cross entropy on the text + eos positions + ctc_weight x CTC of an
auxiliary (not exported) encoder head, which makes the encoder learn alignments early,
+ align_weight x the attention loss of align_loss.py (from --align-start on), which puts the
cross-attention that gives word timestamps onto the frames of each token's word (the manifest's
word times).
AdamW, linear warmup then cosine decay over --steps (fixed, for reproducibility);
--budget-min only stops early as a safety net. Batches are length-bucketed, about
--batch-sec seconds of audio each; order and augmentation come from the seed.
Data parallel: --procs N processes with one thread each split every batch and average their
gradients (torch.distributed, gloo). On small matrices this is about twice as fast as one
process with two threads.
"""
import argparse
import ctypes
import json
import math
import os
import random
import signal
import socket
import sys
import time
import wave

import numpy as np
import sentencepiece as spm
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import align_loss  # noqa: E402
import model as M  # noqa: E402

PROMPT_TEXT = ("<|startofcontext|><|startoftranscript|><|emo:undefined|><|da|><|da|><|pnc|><|noitn|>"
               "<|notimestamp|><|nodiarize|>")
EOS = 3


def read_wav(path):
    with wave.open(path) as w:
        assert w.getframerate() == 16000 and w.getnchannels() == 1 and w.getsampwidth() == 2, path
        return np.frombuffer(w.readframes(w.getnframes()), dtype=np.int16)


def load_manifest(d, sp, limit=0):
    rows = [json.loads(l) for l in open(os.path.join(d, "manifest.jsonl"), encoding="utf-8")]
    if limit:
        rows = rows[:limit]
    for r in rows:
        r["pcm"] = read_wav(os.path.join(d, r["audio"]))
        r["ids"] = sp.encode(r["text"])
        r["times"] = align_loss.token_times([sp.id_to_piece(i) for i in r["ids"]], r.get("words"))
    return rows


def make_batches(rows, batch_sec, rng, shuffle=True):
    """Length-bucketed batches of about batch_sec seconds of (padded) audio, shuffled (or
    shortest first: a curriculum that makes alignments easier to find early)."""
    order = sorted(range(len(rows)), key=lambda i: (len(rows[i]["pcm"]), rng.random()))
    batches, cur = [], []
    for i in order:
        if cur and (len(cur) + 1) * len(rows[i]["pcm"]) / 16000 > batch_sec:
            batches.append(cur)
            cur = []
        cur.append(i)
    if cur:
        batches.append(cur)
    if shuffle:
        rng.shuffle(batches)
    return batches


def collate(rows, idx, prompt):
    lens = torch.tensor([len(rows[i]["pcm"]) for i in idx])
    wav = torch.zeros(len(idx), int(lens.max()))
    for b, i in enumerate(idx):
        wav[b, :lens[b]] = torch.from_numpy(rows[i]["pcm"].astype(np.float32) / 32768.0)
    texts = [rows[i]["ids"] for i in idx]
    S = len(prompt) + max(len(t) for t in texts)
    inp = torch.full((len(idx), S), 2, dtype=torch.long)   # <pad> = 2 (positions are masked)
    tgt = torch.full((len(idx), S), -100, dtype=torch.long)
    for b, t in enumerate(texts):
        seq = prompt + t
        inp[b, :len(seq)] = torch.tensor(seq)
        tgt[b, len(prompt) - 1:len(seq)] = torch.tensor(t + [EOS])
    return wav, lens, inp, tgt, texts


def lr_at(step, a):
    if step < a.warmup:
        return a.lr * (step + 1) / a.warmup
    p = min(1.0, (step - a.warmup) / max(1, a.steps - a.warmup))
    return a.lr * (a.min_lr_frac + (1 - a.min_lr_frac) * 0.5 * (1 + math.cos(math.pi * p)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", required=True)
    ap.add_argument("--tokenizer", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--steps", type=int, default=20000)
    ap.add_argument("--budget-min", type=float, default=0, help="stop (and save) after this many minutes")
    ap.add_argument("--batch-sec", type=float, default=90.0)
    ap.add_argument("--lr", type=float, default=1.5e-3)
    ap.add_argument("--min-lr-frac", type=float, default=0.02)
    ap.add_argument("--warmup", type=int, default=800)
    ap.add_argument("--weight-decay", type=float, default=0.01)
    ap.add_argument("--label-smoothing", type=float, default=0.1)
    ap.add_argument("--ctc-weight", type=float, default=0.3)
    ap.add_argument("--align-weight", type=float, default=0.0, help="weight of the cross-attention alignment loss")
    ap.add_argument("--align-start", type=int, default=2000, help="step from which the alignment loss counts")
    ap.add_argument("--specaug", type=int, default=1)
    ap.add_argument("--sorted-epochs", type=int, default=0, help="epochs that go shortest batches first")
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--dims", default="{}", help="JSON overrides of model.DEFAULT_DIMS")
    ap.add_argument("--limit", type=int, default=0, help="use only the first N utterances")
    ap.add_argument("--save-every", type=int, default=1000)
    ap.add_argument("--log-every", type=int, default=20)
    ap.add_argument("--resume", default="")
    ap.add_argument("--init", default="", help="start from this package's weights (export.py's output; its tokenizer)")
    ap.add_argument("--procs", type=int, default=2, help="data-parallel processes (one thread each)")
    a = ap.parse_args()
    if a.procs > 1:
        with socket.socket() as s:   # a free port for the processes to meet on
            s.bind(("127.0.0.1", 0))
            os.environ["MASTER_PORT"] = str(s.getsockname()[1])
        mp.spawn(run, args=(a,), nprocs=a.procs)
    else:
        run(0, a)


def average_gradients(params, n):
    """All-reduce every gradient as one flat buffer (one message instead of one per tensor)."""
    grads = [p.grad if p.grad is not None else torch.zeros_like(p) for p in params]
    flat = torch.cat([g.reshape(-1) for g in grads])
    dist.all_reduce(flat)
    flat /= n
    off = 0
    for p, g in zip(params, grads):
        p.grad = flat[off:off + g.numel()].view_as(g)
        off += g.numel()


def run(rank, a):
    if a.procs > 1:
        ctypes.CDLL(None).prctl(1, signal.SIGTERM)   # PR_SET_PDEATHSIG: end with the launcher
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        dist.init_process_group("gloo", rank=rank, world_size=a.procs)
    torch.set_num_threads(1 if a.procs > 1 else 2)
    torch.manual_seed(a.seed)
    say = print if rank == 0 else (lambda *x, **k: None)
    rng = random.Random(a.seed)
    os.makedirs(a.out, exist_ok=True)
    sp = spm.SentencePieceProcessor(model_file=a.tokenizer)
    prompt = sp.encode(PROMPT_TEXT)
    assert prompt[1:] == [7, 4, 16, 58, 58, 5, 9, 11, 13], prompt
    t0 = time.time()
    rows = load_manifest(a.data, sp, a.limit)
    hours = sum(len(r["pcm"]) for r in rows) / 16000 / 3600
    say(f"loaded {len(rows)} utterances ({hours:.2f} h) in {time.time() - t0:.0f} s", flush=True)

    dims = dict(M.DEFAULT_DIMS, **json.loads(a.dims), vocab=sp.get_piece_size())
    net = M.CohereAsr(dims)
    opt = torch.optim.AdamW(net.parameters(), lr=a.lr, betas=(0.9, 0.98), weight_decay=a.weight_decay)
    step, epoch, done_in_epoch = 0, 0, 0
    if a.init and not a.resume:   # fine-tuning: a fresh optimizer and schedule, the package's weights
        from export import load_package
        with open(a.tokenizer, "rb") as f, open(os.path.join(a.init, "tokenizer.model"), "rb") as g:
            assert f.read() == g.read(), f"--tokenizer {a.tokenizer} is not {a.init}'s tokenizer.model"
        init = load_package(a.init)   # it checks that the package lacks only M.EXPORT_SKIP
        assert init.dims == dims, f"{a.init}: dims {init.dims} != {dims}"
        net.load_state_dict({k: v for k, v in init.state_dict().items() if not k.startswith(M.EXPORT_SKIP)},
                            strict=False)
        say(f"init from {a.init}; new (packages lack them): {', '.join(M.EXPORT_SKIP)}", flush=True)
    if a.resume:
        ck = torch.load(a.resume, map_location="cpu")
        net.load_state_dict(ck["model"])
        opt.load_state_dict(ck["opt"])
        step, epoch, done_in_epoch = ck["step"], ck["epoch"], ck.get("done_in_epoch", 0)
        rng.setstate(ck["rng"])   # as the epoch began: its batches are made again, the done ones skipped
        torch.set_rng_state(ck["torch_rng"])
    if a.procs > 1:   # the same weights everywhere, different augmentation and dropout per process
        torch.manual_seed(a.seed + 1 + rank + 7919 * step)
    say(f"model: {M.n_params(net.export_state()) / 1e6:.2f} M exported params, dims {json.dumps(dims)}", flush=True)

    def save(tag):
        ck = {"dims": dims, "model": net.state_dict(), "opt": opt.state_dict(), "step": step, "epoch": epoch,
              "done_in_epoch": done_in_epoch, "tokenizer": os.path.abspath(a.tokenizer), "rng": epoch_rng, "torch_rng": torch.get_rng_state(),
              "args": vars(a)}
        torch.save(ck, os.path.join(a.out, f"{tag}.pt.tmp"))
        os.replace(os.path.join(a.out, f"{tag}.pt.tmp"), os.path.join(a.out, f"{tag}.pt"))

    log = open(os.path.join(a.out, "train_log.jsonl"), "a") if rank == 0 else None
    params = list(net.parameters())
    t_start, n_utt, n_sec = time.time(), 0, 0.0
    acc = {"loss": 0.0, "ce": 0.0, "ctc": 0.0, "align": 0.0, "n": 0}
    net.train()
    while step < a.steps:
        epoch_rng = rng.getstate()
        batches = make_batches(rows, a.batch_sec, rng, shuffle=epoch >= a.sorted_epochs)
        for idx in batches[done_in_epoch:]:
            if step >= a.steps:
                break
            done_in_epoch += 1
            if len(idx) < a.procs:
                continue
            whole, idx = idx, idx[rank::a.procs]
            wav, lens, inp, tgt, texts = collate(rows, idx, prompt)
            for g in opt.param_groups:
                g["lr"] = lr_at(step, a)
            feat, tv = net.preprocessor.featurizer(wav, lens)
            if a.specaug:
                feat = M.spec_augment(feat, tv)
            enc, mem, n3 = net.encode(feat, tv)
            attn = [] if a.align_weight > 0 and step >= a.align_start else None
            logp = net.decode(inp, mem, n3, attn)
            ce = F.nll_loss(logp.transpose(1, 2), tgt, ignore_index=-100)
            smooth = -(logp.mean(-1) * (tgt != -100)).sum() / (tgt != -100).sum()
            ce_ls = (1 - a.label_smoothing) * ce + a.label_smoothing * smooth
            loss = ce_ls
            ctc = torch.zeros(())
            if a.ctc_weight > 0:
                lp = F.log_softmax(net.aux_ctc(enc), -1).transpose(0, 1)        # [T, B, V]
                flat = torch.tensor([i for t in texts for i in t])
                ctc = F.ctc_loss(lp, flat, n3, torch.tensor([len(t) for t in texts]), blank=0,
                                 reduction="mean", zero_infinity=True)
                loss = loss + a.ctc_weight * ctc
            al = torch.zeros(())
            if attn is not None:
                al = align_loss.attention_loss(attn, [rows[i]["times"] for i in idx], n3, len(prompt) - 1)
                loss = loss + a.align_weight * al
            opt.zero_grad(set_to_none=True)
            loss.backward()
            if a.procs > 1:
                average_gradients(params, a.procs)
            torch.nn.utils.clip_grad_norm_(params, 5.0)
            opt.step()
            step += 1
            n_utt += len(whole)
            n_sec += sum(len(rows[i]["pcm"]) for i in whole) / 16000
            for k, v in (("loss", loss), ("ce", ce), ("ctc", ctc), ("align", al)):
                acc[k] += float(v)
            acc["n"] += 1
            el = time.time() - t_start
            if step % a.log_every == 0 or step == a.steps:
                if a.procs > 1:
                    t = torch.tensor([acc["loss"], acc["ce"], acc["ctc"], acc["align"]])
                    dist.all_reduce(t)
                    acc.update(loss=float(t[0]) / a.procs, ce=float(t[1]) / a.procs, ctc=float(t[2]) / a.procs,
                               align=float(t[3]) / a.procs)
                rec = {"step": step, "epoch": epoch, "loss": acc["loss"] / acc["n"], "ce": acc["ce"] / acc["n"],
                       "ctc": acc["ctc"] / acc["n"], "align": acc["align"] / acc["n"], "lr": lr_at(step - 1, a), "elapsed_s": round(el, 1),
                       "utt_per_s": round(n_utt / el, 2), "audio_x_realtime": round(n_sec / el, 1)}
                say(json.dumps(rec), flush=True)
                if log:
                    log.write(json.dumps(rec) + "\n")
                    log.flush()
                acc = {"loss": 0.0, "ce": 0.0, "ctc": 0.0, "align": 0.0, "n": 0}
            if step % a.save_every == 0 and rank == 0:
                save("last")
            stop = torch.tensor([float(a.budget_min and el > a.budget_min * 60)])
            if a.procs > 1:
                dist.broadcast(stop, 0)   # every process stops at the same step
            if stop.item():
                say(f"time budget reached at step {step}", flush=True)
                a.steps = step
                break
        else:   # the whole epoch was done; a save from here on resumes at the next one
            epoch += 1
            done_in_epoch = 0
            epoch_rng = rng.getstate()
    net.eval()
    if rank == 0:
        save("last")
    say(f"done: {step} steps, {epoch} epochs, {n_utt} utterances in {time.time() - t_start:.0f} s", flush=True)


if __name__ == "__main__":
    main()
