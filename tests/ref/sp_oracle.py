#!/usr/bin/python3
"""Oracle for the C SentencePiece detokenizer (tests/unit/test_sentencepiece.c).

    /usr/bin/python3 sp_oracle.py TOKENIZER_MODEL [N_RANDOM=300]

Prints, for libsentencepiece's view of the model and ~300 id sequences made
with a fixed seed (NORMAL pieces, BYTE runs that are valid or invalid UTF-8,
whitespace, special ids), the text upstream gets (hviske_asr spec 4.7):
drop UNKNOWN/CONTROL/USER_DEFINED/UNUSED ids (upstream skip_special_tokens),
sp.DecodeIds() the rest, drop U+0000 (the C result is a C string),
str.strip(). Lines:

    P <id> <piece as hex> <type 1..6>      every piece
    D <n> <id> ...                          one sequence (unfiltered ids)
    T <expected UTF-8 as hex, '-' if empty>

Exit status 77 when python3-sentencepiece is not installed.
"""
import json
import os
import random
import sys

try:
    import sentencepiece as spm
except ImportError:
    print("python3-sentencepiece is not installed", file=sys.stderr)
    sys.exit(77)

NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6


def varint(b, i):
    v = shift = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if c < 0x80:
            return v, i


def fields(b):
    """(number, wire type, value) of a protobuf message (no groups)."""
    i = 0
    while i < len(b):
        tag, i = varint(b, i)
        num, wt = tag >> 3, tag & 7
        if wt == 0:
            v, i = varint(b, i)
        elif wt == 1:
            v, i = b[i:i + 8], i + 8
        elif wt == 5:
            v, i = b[i:i + 4], i + 4
        elif wt == 2:
            n, i = varint(b, i)
            v, i = b[i:i + n], i + n
        else:
            raise ValueError("wire type %d" % wt)
        yield num, wt, v


def user_defined_ids(path):
    """The Python module cannot tell USER_DEFINED pieces; read the types."""
    with open(path, "rb") as f:
        model = f.read()
    out, idx = set(), 0
    for num, _, v in fields(model):
        if num != 1:
            continue
        for n2, _, t in fields(v):
            if n2 == 3 and t == USER_DEFINED:
                out.add(idx)
        idx += 1
    return out


def types(sp, user):
    t = []
    for i in range(sp.GetPieceSize()):
        if sp.IsUnknown(i):
            t.append(UNKNOWN)
        elif sp.IsControl(i):
            t.append(CONTROL)
        elif sp.IsUnused(i):
            t.append(UNUSED)
        elif sp.IsByte(i):
            t.append(BYTE)
        elif i in user:
            t.append(USER_DEFINED)
        else:
            t.append(NORMAL)
    return t


# byte runs: valid characters (whitespace among them), broken sequences
CHARS = "aZ0 \t\n\r\x0b\x0c\x1c\x1f\x85\xa0åøæÅ€\u1680\u2000\u200a\u2028\u2029\u202f\u205f\u3000" \
        "\u2581\ufffd\ud7ff\ue000\U0001F600\U0010FFFF"
BROKEN = [b"\xc0\x80", b"\xc1\xbf", b"\xe0\x80\x80", b"\xe0\x9f\xbf", b"\xf0\x80\x80\x80", b"\xf0\x8f\xbf\xbf",
          b"\xed\xa0\x80", b"\xed\xbf\xbf", b"\xf4\x90\x80\x80", b"\xf5\x80\x80\x80", b"\xf8\x88\x80\x80\x80",
          b"\xfc\x84\x80\x80\x80\x80", b"\xfe", b"\xff", b"\x80", b"\xbf", b"\xc3", b"\xe2\x82", b"\xf0\x9f\x98",
          b"\xc3\x28", b"\xe2\x28\xa1", b"\xef\xbf\xbd"]


def byte_run(rng):
    k = rng.randrange(5)
    if k == 0:
        return "".join(rng.choice(CHARS) for _ in range(rng.randint(1, 3))).encode()
    if k == 1:
        c = rng.choice([ch for ch in CHARS if len(ch.encode()) > 1]).encode()
        return c[:rng.randint(1, len(c) - 1)]  # truncated
    if k == 2:
        return rng.choice(BROKEN)
    if k == 3:
        return bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
    return bytes(rng.randrange(0x80, 0x100) for _ in range(rng.randint(1, 4)))


def sequences(rng, sp, t, n):
    normal = [i for i, x in enumerate(t) if x == NORMAL]
    special = [i for i, x in enumerate(t) if x not in (NORMAL, BYTE)]
    byte_id = {int(sp.IdToPiece(i)[3:5], 16): i for i, x in enumerate(t) if x == BYTE}
    space = sp.PieceToId("\u2581")
    pid = sp.PieceToId
    # fixed cases: the spec's example, a lone byte, edge cases of the strip
    # and of the first piece's dummy-prefix space
    yield [1247, 13794, 1574, 2577, 13784, 532, 13787, 853, 526, 549, 450, 420, 13772, 3491, 13819]
    yield [byte_id[0xC3]]
    yield []
    yield special[:5]
    yield [space]
    yield [space, space, pid("\u2581b")]
    yield [byte_id[0x41], pid("\u2581b")]
    yield [byte_id[0xC3], special[3], byte_id[0xA5]]
    yield [byte_id[0xC2], byte_id[0xA0], pid("\u2581b"), byte_id[0xE3], byte_id[0x80], byte_id[0x80]]
    yield [byte_id[0xE2], byte_id[0x82]]
    yield [byte_id[0x00], byte_id[0x20], pid("\u2581b"), byte_id[0x00], byte_id[0x41], byte_id[0x00]]
    for _ in range(n):
        seq = []
        for _ in range(rng.randrange(13)):
            k = rng.randrange(10)
            if k < 4:
                seq.append(rng.choice(normal))
            elif k == 4:
                seq.append(space)
            elif k < 8:
                seq += [byte_id[b] for b in byte_run(rng)]
            else:
                seq.append(rng.choice(special))
        yield seq


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    path = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 300
    sp = spm.SentencePieceProcessor(model_file=path)
    t = types(sp, user_defined_ids(path))
    # upstream drops the ids its tokenizer_config marks special: check that
    # this is exactly the set the piece types drop
    cfg = os.path.join(os.path.dirname(path), "tokenizer_config.json")
    if os.path.exists(cfg):
        with open(cfg) as f:
            dec = json.load(f).get("added_tokens_decoder", {})
        upstream = {int(k) for k, v in dec.items() if v.get("special")}
        ours = {i for i, x in enumerate(t) if x not in (NORMAL, BYTE)}
        if upstream != ours:
            print("special ids of tokenizer_config.json differ from the non-NORMAL/BYTE pieces", file=sys.stderr)
            return 1
    out = sys.stdout
    for i in range(sp.GetPieceSize()):
        out.write("P %d %s %d\n" % (i, sp.IdToPiece(i).encode().hex(), t[i]))
    rng = random.Random(4242)
    for seq in sequences(rng, sp, t, n):
        kept = [i for i in seq if t[i] in (NORMAL, BYTE)]
        # the C decoder returns a C string: it drops U+0000 (from <0x00>)
        # before the strip, as if the byte were not there
        text = sp.DecodeIds(kept).replace("\0", "").strip()
        out.write("D %d %s\n" % (len(seq), " ".join(map(str, seq))))
        out.write("T %s\n" % (text.encode().hex() or "-"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
