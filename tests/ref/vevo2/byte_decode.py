"""GPT-2's byte-level alphabet, and decoding ids with a tokenizer.json of
Qwen2's pipeline (byte-level BPE, added tokens kept) as Hugging Face's
decode(skip_special_tokens=False) does."""
import functools


@functools.lru_cache(maxsize=None)
def byte_alphabet():
    """{byte: the printable character GPT-2 maps it to}."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    cs, n = list(bs), 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


def decode(tok, ids):
    """TOK is the parsed tokenizer.json."""
    added = {t["id"]: t["content"] for t in tok["added_tokens"]}
    vocab = {i: s for s, i in tok["model"]["vocab"].items()}
    unbyte = {c: b for b, c in byte_alphabet().items()}
    out, pending = [], bytearray()
    for i in ids:
        if i in added:
            out.append(pending.decode("utf-8", "replace"))
            pending = bytearray()
            out.append(added[i])
        else:
            pending += bytes(unbyte[ch] for ch in vocab[i])
    out.append(pending.decode("utf-8", "replace"))
    return "".join(out)
