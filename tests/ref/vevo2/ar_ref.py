#!/usr/bin/python3
"""Vevo2's AR side for tests (spec vevo2.md §4.6-4.8, §7.2): the package's
contentstyle_modeling/posttrained folder with a tiny byte-level BPE
tokenizer (the 256 GPT-2 byte symbols, merges learnt from a fixed text,
then the added tokens) or the real Qwen2.5 vocabulary plus Vevo2's 16 900
tokens, and a Qwen2 of random weights; the prompt of §4.6 and the parser of
the continuation; the Hugging Face tokenizers oracle (tests/node).

The prompt and parser are written from the spec's description (Amphion's
gen_chat_prompt and extract_special_ids), not from the C code.
"""
import collections
import json
import os
import re
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "qwen2"))
import make_checkpoints  # noqa: E402
from byte_decode import byte_alphabet  # noqa: E402

AR_DIR = "contentstyle_modeling/posttrained"
NODE_DIR = os.path.join(HERE, "..", "..", "node")
QWEN2_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|"
               r"\s*[\r\n]+|\s+(?!\S)|\s+")
INSTRUCTION = {
    False: "User will provide you with a text. Please vocalize it with natural expression.",
    True: "User will provide you with a text. Please first generate a good prosodic instruction, then vocalize "
          "the text based on it.",
}
# spec §7.2: hidden 64, heads 4, kv 2 (head 16), intermediate 128, layers 2, tied
TINY = {"hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4,
        "num_key_value_heads": 2, "max_position_embeddings": 4096}
FULL = {"hidden_size": 896, "intermediate_size": 4864, "num_hidden_layers": 24, "num_attention_heads": 14,
        "num_key_value_heads": 2, "max_position_embeddings": 32768}
MERGE_TEXT = ("the quick brown fox jumps over the lazy dog. she sells sea shells by the sea shore. "
              "hello world, this is a test of the speech synthesis. singing in the rain, what a glorious feeling.")


def tokenizer_json(vocab, merges, added):
    """Hugging Face's tokenizer.json for Qwen2's pipeline."""
    return {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [{"id": i, "content": c, "single_word": False, "lstrip": False, "rstrip": False,
                          "normalized": n, "special": s} for i, c, s, n in added],
        "normalizer": {"type": "NFC"},
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": QWEN2_REGEX}, "behavior": "Isolated", "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}]},
        "post_processor": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False},
        "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": "",
                  "end_of_word_suffix": "", "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                  "vocab": vocab, "merges": merges},
    }


def vevo2_tokens(n_content_style, n_prosody):
    """The tokens Vevo2 adds after Qwen's, in the C++ port's order."""
    return ([f"<|content_style_{i}|>" for i in range(n_content_style)] + [f"<|prosody_{i}|>" for i in range(n_prosody)]
            + ["<|prosody_start|>", "<|prosody_end|>", "<|content_style_start|>", "<|content_style_end|>"])


def tiny_vocab(n_merges=50):
    """(vocab, merges): the 256 byte symbols (ids 0..255 in byte order) and merges learnt on MERGE_TEXT."""
    alpha = byte_alphabet()
    vocab = {alpha[b]: b for b in range(256)}
    words = [[alpha[b] for b in w.encode()] for w in re.findall(r" ?\S+", MERGE_TEXT)]
    merges = []
    for _ in range(n_merges):
        pairs = collections.Counter(p for w in words for p in zip(w, w[1:]))
        if not pairs:
            break
        (a, b), _ = max(pairs.items(), key=lambda kv: (kv[1], kv[0]))
        merges.append(f"{a} {b}")
        vocab[a + b] = len(vocab)
        for w in words:
            i = 0
            while i < len(w) - 1:
                if w[i] == a and w[i + 1] == b:
                    w[i:i + 2] = [a + b]
                else:
                    i += 1
    return vocab, merges


def write_json(path, obj):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(obj, f, ensure_ascii=False, indent=1)


def write_tokenizer(folder, vocab, merges, qwen_added, n_content_style, n_prosody):
    """Every tokenizer file of the AR folder; returns (vocab size, {token: id} of the added tokens)."""
    nxt = max(vocab.values()) + 1 if not qwen_added else max(i for i, *_ in qwen_added) + 1
    added = list(qwen_added) + [(nxt + k, c, True, False)
                                for k, c in enumerate(vevo2_tokens(n_content_style, n_prosody))]
    write_json(os.path.join(folder, "tokenizer.json"), tokenizer_json(vocab, merges, added))
    write_json(os.path.join(folder, "vocab.json"), vocab)
    with open(os.path.join(folder, "merges.txt"), "w", encoding="utf-8") as f:
        f.write("#version: 0.2\n" + "".join(m + "\n" for m in merges))
    decoder = {str(i): {"content": c, "lstrip": False, "normalized": n, "rstrip": False, "single_word": False,
                        "special": s} for i, c, s, n in added}
    write_json(os.path.join(folder, "tokenizer_config.json"),
               {"added_tokens_decoder": decoder, "bos_token": None, "eos_token": "<|im_end|>",
                "pad_token": "<|endoftext|>", "model_max_length": 32768, "tokenizer_class": "Qwen2Tokenizer"})
    write_json(os.path.join(folder, "added_tokens.json"), {c: i for i, c, _, _ in added})
    write_json(os.path.join(folder, "special_tokens_map.json"),
               {"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>"})
    ids = {c: i for i, c, _, _ in added}
    return max(ids.values()) + 1, ids


def qwen_added(qwen_dir):
    with open(os.path.join(qwen_dir, "tokenizer_config.json"), encoding="utf-8") as f:
        config = json.load(f)
    return [(int(i), t["content"], t.get("special", False), t.get("normalized", not t.get("special", False)))
            for i, t in sorted(config["added_tokens_decoder"].items(), key=lambda kv: int(kv[0]))]


def write(root, seed, dtype, n_content_style, n_prosody, full=False, qwen_dir=None):
    """The AR folder under ROOT: tiny (tokenizer of §7.2) or, with FULL, the real
    dimensions and the Qwen2.5 vocabulary of QWEN_DIR. Returns the folder."""
    folder = os.path.join(root, AR_DIR)
    if full:
        with open(os.path.join(qwen_dir, "vocab.json"), encoding="utf-8") as f:
            vocab = json.load(f)
        with open(os.path.join(qwen_dir, "merges.txt"), encoding="utf-8") as f:
            merges = [line.rstrip("\r\n") for line in f if line.strip() and not line.startswith("#version")]
        qwen = qwen_added(qwen_dir)
    else:
        vocab, merges = tiny_vocab()
        base = len(vocab)
        qwen = [(base + k, c, True, False) for k, c in enumerate(["<|endoftext|>", "<|im_start|>", "<|im_end|>"])]
    V, ids = write_tokenizer(folder, vocab, merges, qwen, n_content_style, n_prosody)
    eos, pad = ids["<|im_end|>"], ids["<|endoftext|>"]
    cfg = dict(make_checkpoints.BASE, **(FULL if full else TINY), vocab_size=V, bos_token_id=pad, eos_token_id=eos)
    t = make_checkpoints.weights(cfg, seed)
    # spec §7.2: content-style rows scaled so random continuations make such tokens
    cs = [ids[f"<|content_style_{i}|>"] for i in range(n_content_style)]
    t["model.embed_tokens.weight"][cs] *= 4
    gen = dict(make_checkpoints.GENERATION, eos_token_id=[eos, pad], pad_token_id=pad, bos_token_id=pad)
    make_checkpoints.write(folder, cfg, t, dtype, gen)
    return folder


def prompt_text(use_prosody, style_text, text, prosody_ids, style_ids):
    """Spec §4.6, byte for byte."""
    p = (f"<|im_start|>system\n{INSTRUCTION[bool(use_prosody)]}<|im_end|>\n<|im_start|>user\n"
         f"{style_text or ''} {text}<|im_end|>\n<|im_start|>assistant\n")
    if use_prosody:
        p += "<|prosody_start|>" + "".join(f"<|prosody_{int(i)}|>" for i in prosody_ids) + "<|prosody_end|>"
    return p + "<|content_style_start|>" + "".join(f"<|content_style_{int(i)}|>" for i in style_ids)


def parse_content_style(text):
    """Every <|content_style_N|> of the decoded continuation, in order."""
    return [int(n) for n in re.findall(r"<\|content_style_(\d+)\|>", text)]


def oracle(tokenizer, texts=(), decode=()):
    """Hugging Face tokenizers (tests/node/bpe_oracle.js): ids of TEXTS, DECODE's [(ids, skip)] as text."""
    spec = {"tokenizer": tokenizer, "texts": list(texts), "decode": [{"ids": i, "skip": s} for i, s in decode]}
    p = subprocess.run(["node", os.path.join(NODE_DIR, "bpe_oracle.js")], input=json.dumps(spec),
                       capture_output=True, text=True, cwd=NODE_DIR, timeout=600)
    if p.returncode != 0:
        raise RuntimeError("node oracle failed: " + p.stderr[-2000:])
    return json.loads(p.stdout)


def oracle_available():
    return os.path.isdir(os.path.join(NODE_DIR, "node_modules", "@anush008", "tokenizers"))
