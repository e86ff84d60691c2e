"""audioc tokenize against Hugging Face tokenizers (the Rust library through
its Node binding, tests/node/bpe_oracle.js): the same ids for a varied set
of texts (and 1000 random ones from the characters that matter to the
pre-tokenizer) with the real Qwen2.5 vocabulary (read from vocab.json +
merges.txt + tokenizer_config.json, which the oracle gets as the equivalent
tokenizer.json) and with a Vevo2-style package whose tokenizer.json adds
the content-style and prosody tokens; the same text back from ids, special
tokens kept or dropped; decode(encode(x)) == NFC(x)."""
import json
import os
import random
import shutil
import subprocess
import sys
import unicodedata

import pytest

import testenv
from common import DATA, audioc

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "ref", "vevo2"))
from ar_ref import tokenizer_json  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
NODE_DIR = os.path.join(HERE, "..", "node")
ORACLE = os.path.join(NODE_DIR, "bpe_oracle.js")
QWEN = os.path.join(DATA, "qwen2.5_tokenizer")
WORK = os.path.join(testenv.WORK, "tokenize")
N_CONTENT_STYLE, N_PROSODY = 16384, 512

TEXTS = [
    "Hello world", "Hello, world! How are you today?", " leading space", "trailing spaces   ",
    "It's, I'm, you're, we've, they'll, he'd, don't", "IT'S I'LL WE'VE THEY'RE HE'D I'M CAN'T",
    "'s 'S 'll 'LL 'Re 'rE 'vE 'D 'M 't", "'sup 'tis 'lla 'dd", "the 'ſ long s", "'",
    "Danish: Rødgrød med fløde, æble, ø, å, Æ Ø Å. Hvordan går det?", "Grüße aus Köln: Straße, Maß, ÄÖÜ äöü",
    "你好，世界！今天天气很好。", "日本語のテキスト、カタカナとひらがな。東京は晴れ。", "한국어 텍스트입니다. 안녕하세요!",
    "مرحبا بالعالم، كيف حالك؟", "Ελληνικά κείμενα", "Привет, мир!", "हिन्दी पाठ",
    "emoji 😀😃😄 👍🏽 👨‍👩‍👧‍👦 🏳️‍🌈 ❤️ 🇩🇰", "1234567890 3.14159 1,000,000 2026-12-01 ½ ² Ⅻ ٣٤٥",
    "a1b2c3 x²", "line one\nline two\n\nline four\n", "crlf\r\nline\r\n\r\nend\r\n", "tabs\tand\t\ttabs \t mixed",
    "    indented code\n\tif (x) {\n\t\treturn 1;\n\t}\n", "   ", "\n", "\r\n\r\n", " \n \n ", "a  b   c    d",
    "trailing newline spaces  \n  next", "\u00a0no-break\u00a0space\u3000ideographic\u2003em",
    "nel\u0085next", "zw\u200bsp", "unit\u001fsep",
    "e\u0301 cafe\u0301 A\u030a n\u0303 (NFC composes these)", "ﬁ ligature, Å angstrom sign",
    "<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n",
    "glued<|endoftext|>words<|im_end|>again", "<|im_start|><|im_start|>", "< |im_start| > <|im_start <|im_start|",
    "x<|endoftext|>", "<|endoftext|>", "<tool_call>{\"a\": 1}</tool_call>",
    "code: def f(x):\n    return x**2  # square\n", "punctuation!!! ??? ... --- ((( ))) {{}} [[]]",
    "mixed: hello世界123abc", "URL https://example.com/path?q=1&r=two#frag", "e-mail a.b@c.de",
    "$100 €50 £20 ¥1000", "quotes “smart” ‘single’ «guillemets»", "a" * 300, "ab" * 200 + " " + "9" * 50,
    "x" + " " * 40 + "y", "Ω≈ç√∫˜µ≤≥÷", "\u2028line sep\u2029para sep",
]

VEVO_TEXTS = [
    "<|content_style_start|><|content_style_0|><|content_style_16383|><|content_style_end|>",
    "<|prosody_start|><|prosody_1|><|prosody_511|><|prosody_end|>",
    "<|im_start|>user\nHej verden<|im_end|>\n<|im_start|>assistant\n<|prosody_start|><|prosody_7|><|prosody_end|>"
    "<|content_style_start|><|content_style_12|><|content_style_123|>",
    "<|content_style_1|>2<|content_style_12|>3<|content_style_1234|>", "<|content_style_99999|> <|prosody_|>",
    "text<|content_style_5|>glued<|prosody_5|>words", "<|content_style_16384|> <|prosody_512|>",
]


def random_texts(n, seed=5):
    """Short texts drawn from the characters the pre-tokenizer treats
    differently: letters, digits, apostrophes and contraction letters, every
    kind of white space and line break, punctuation, combining marks, CJK,
    emoji with ZWJ, and pieces of added tokens."""
    pool = (list("aAsStTrReEvVmMlLdD'' .,!?-_\"()[]{}#$%&*+/<>|=~`^") + list("0123456789") +
            [" ", "  ", "\t", "\n", "\r\n", "\r", "\u00a0", "\u3000", "\u0085", "\u2028", "\u200b", "\u000b",
             "\u000c", "\u001c", "\u0301", "\u0308", "\u017f", "\u00e9", "\u00f8", "\u00df", "\u4f60", "\u597d",
             "\u3042", "\ud55c", "\u0639", "\u0664", "\u00bd", "\u2167", "\U0001F600", "\u200d", "\U0001F469",
             "\U0001F3FD", "\ufe0f", "<|im_start|>", "<|endoftext|>", "<|im_", "|>", "'ll", "'S", "'re", "'Ve"])
    rng = random.Random(seed)
    return ["".join(rng.choice(pool) for _ in range(rng.randint(1, 24))) for _ in range(n)]


def write_json(path, obj):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(obj, f, ensure_ascii=False)


def make_tokenizers():
    """The oracle's tokenizer.json for the Qwen2.5 folder, and a Vevo2-style
    package (its AR folder holds tokenizer.json only)."""
    with open(os.path.join(QWEN, "vocab.json"), encoding="utf-8") as f:
        vocab = json.load(f)
    with open(os.path.join(QWEN, "merges.txt"), encoding="utf-8") as f:
        merges = [line.rstrip("\r\n") for line in f if line.strip() and not line.startswith("#version")]
    with open(os.path.join(QWEN, "tokenizer_config.json"), encoding="utf-8") as f:
        config = json.load(f)
    added = [(int(i), t["content"], t.get("special", False), t.get("normalized", not t.get("special", False)))
             for i, t in sorted(config["added_tokens_decoder"].items(), key=lambda kv: int(kv[0]))]
    qwen_json = os.path.join(WORK, "qwen2.5_tokenizer.json")
    write_json(qwen_json, tokenizer_json(vocab, merges, added))
    nxt = max(i for i, *_ in added) + 1
    extra = [f"<|content_style_{i}|>" for i in range(N_CONTENT_STYLE)] + [f"<|prosody_{i}|>" for i in range(N_PROSODY)]
    extra += ["<|prosody_start|>", "<|prosody_end|>", "<|content_style_start|>", "<|content_style_end|>"]
    vevo_added = added + [(nxt + k, c, True, False) for k, c in enumerate(extra)]
    # added tokens matched in the NFC text (normalized) or the raw one
    norm_json = os.path.join(WORK, "normalized_tokens.json")
    write_json(norm_json, tokenizer_json(vocab, merges, added + [(nxt, "<|e\u0301|>", False, True),
                                                                 (nxt + 1, "<|raw\u0301|>", True, False)]))
    package = os.path.join(WORK, "vevo2_package")
    vevo_json = os.path.join(package, "contentstyle_modeling", "posttrained", "tokenizer.json")
    write_json(vevo_json, tokenizer_json(vocab, merges, vevo_added))
    return qwen_json, norm_json, package, vevo_json, nxt + len(extra)


def oracle(tokenizer, texts, decode):
    p = subprocess.run(["node", ORACLE], input=json.dumps({"tokenizer": tokenizer, "texts": texts, "decode": decode}),
                       capture_output=True, text=True, cwd=NODE_DIR, timeout=600)
    if p.returncode != 0:
        raise RuntimeError("node oracle failed: " + p.stderr[-2000:])
    return json.loads(p.stdout)


def ours(model, texts):
    rc, out, err = audioc("tokenize", "--model", model, "--", *texts)
    if rc != 0:
        raise RuntimeError(f"audioc tokenize failed ({rc}): {err}")
    return [json.loads(line) for line in out.split("\n") if line]


def ours_decode(model, seqs, skip):
    args = ["tokenize", "--model", model, "--decode"] + (["--skip-special"] if skip else [])
    rc, out, err = audioc(*args, input="".join(json.dumps(s) + "\n" for s in seqs))
    if rc != 0:
        raise RuntimeError(f"audioc tokenize --decode failed ({rc}): {err}")
    return [json.loads(line) for line in out.split("\n") if line]


def compare(name, model, oracle_json, texts, size, roundtrip=True):
    got = ours(model, texts)
    rng = random.Random(7)
    # the texts' own ids, and random ids: byte tokens cut mid-character,
    # specials among them
    seqs = [ids for ids in got if ids] + [[rng.randrange(size) for _ in range(rng.randint(1, 12))] for _ in range(60)]
    seqs += [[rng.randrange(256) for _ in range(8)] for _ in range(40)]
    decode = [{"ids": s, "skip": skip} for skip in (False, True) for s in seqs]
    ref = oracle(oracle_json, texts, decode)
    same = sum(a == b for a, b in zip(got, ref["ids"]))
    assert len(got) == len(texts), f"{name}: {len(got)} results for {len(texts)} texts"
    for text, a, b in zip(texts, got, ref["ids"]):
        assert a == b, f"{name}: {text[:40]!r}: ids {a[:20]} != oracle {b[:20]}"
    back = ours_decode(model, seqs, False) + ours_decode(model, seqs, True)
    dsame = sum(a == b for a, b in zip(back, ref["decoded"]))
    assert len(back) == len(decode), f"{name}: {len(back)} decoded for {len(decode)}"
    for d, a, b in zip(decode, back, ref["decoded"]):
        assert a == b, f"{name}: decode {d['ids'][:12]} skip={d['skip']}: {a[:40]!r} != oracle {b[:40]!r}"
    for text, a in zip(texts, back if roundtrip else []):
        assert a == unicodedata.normalize("NFC", text), f"{name}: decode(encode({text[:40]!r})) = {a[:40]!r}"
    print(f"{name}: {same}/{len(texts)} texts, {dsame}/{len(decode)} decodes as the oracle", file=sys.stderr)


def compare_long(name, model, oracle_json):
    """A long text through stdin: the texts shuffled together (~200 KB, the
    word cache at work), and one 20 000-letter word (the merge heap)."""
    rng = random.Random(11)
    parts = TEXTS * 40
    rng.shuffle(parts)
    texts = ["".join(parts), "".join(rng.choice("abcdefghij") for _ in range(20000))]
    ref = oracle(oracle_json, texts, [])
    for text, want in zip(texts, ref["ids"]):
        rc, out, err = audioc("tokenize", "--model", model, input=text)
        got = json.loads(out) if rc == 0 else None
        assert got == want, f"{name}: {len(text.encode())} bytes from stdin: {len(got or [])} ids, oracle {len(want)}"



@pytest.fixture(scope="module")
def tok():
    """The tokenizers compared: (qwen tokenizer.json, normalized, vevo2 package, its tokenizer.json, its size)."""
    if not os.path.isfile(os.path.join(QWEN, "vocab.json")):
        pytest.skip(f"no Qwen2.5 tokenizer in {QWEN}")
    have_oracle = shutil.which("node") and os.path.isdir(os.path.join(NODE_DIR, "node_modules", "@anush008", "tokenizers"))
    if not have_oracle:
        msg = "Hugging Face tokenizers is not installed (node and tests/node/node_modules/@anush008/tokenizers: " \
              "run scripts/setup.sh)"
        if os.environ.get("CI"):
            pytest.fail(msg)
        pytest.skip(msg)
    os.makedirs(WORK, exist_ok=True)
    return make_tokenizers()


def test_qwen_vocab_merges(tok):
    """vocab.json + merges.txt give the oracle's ids."""
    qwen_json, norm_json, package, vevo_json, vevo_size = tok
    compare("qwen2.5 (vocab.json + merges.txt)", QWEN, qwen_json, TEXTS, 151665)


def test_qwen_tokenizer_json(tok):
    """tokenizer.json gives the oracle's ids, on 1000 random texts too."""
    qwen_json, norm_json, package, vevo_json, vevo_size = tok
    compare("qwen2.5 (tokenizer.json)", qwen_json, qwen_json, TEXTS[:12] + random_texts(1000), 151665)


def test_normalized_added_tokens(tok):
    """Added tokens with normalized content match as the oracle's do."""
    qwen_json, norm_json, package, vevo_json, vevo_size = tok
    compare("normalized added tokens", norm_json, norm_json,
            ["a<|\u00e9|>b", "a<|e\u0301|>b", "<|raw\u0301|> <|ra\u1e83|>", "x<|raw\u0301|>y"], 151667,
            roundtrip=False)  # the tokens decode to their own (not NFC) content, in HF too


def test_vevo2_package(tok):
    """A Vevo2-style package with content-style and prosody tokens."""
    qwen_json, norm_json, package, vevo_json, vevo_size = tok
    compare("vevo2 package", package, vevo_json, VEVO_TEXTS + TEXTS, vevo_size)


def test_vevo2_package_long(tok):
    """Long texts from standard input."""
    qwen_json, norm_json, package, vevo_json, vevo_size = tok
    compare_long("vevo2 package", package, vevo_json)


def test_errors(tok):
    """Errors name the file and the problem."""
    bad = os.path.join(WORK, "bad")
    os.makedirs(bad, exist_ok=True)
    cases = [("[1, 2]", "not a tokenizer.json"), ('{"added_tokens": []}', "no \"model\""),
             ('{"model": {"type": "BPE", "vocab": {"a": 0}', "not valid JSON"),
             (json.dumps(tokenizer_json({"a": 0, "b": 1, "ab": 2}, ["a c"], [])), "'c' which is not in the vocabulary")]
    for k, (body, needle) in enumerate(cases):
        path = os.path.join(bad, f"case{k}.json")
        with open(path, "w") as f:
            f.write(body)
        rc, out, err = audioc("tokenize", "--model", path, "x")
        assert rc == 1 and path in err and needle in err, f"bad tokenizer {body[:30]!r}: rc {rc}, {err.strip()!r}"
    rc, out, err = audioc("tokenize", "--model", QWEN, "--", "ok", "\udcff")
    assert rc == 1 and out.startswith("[") and "not valid UTF-8" in err, f"invalid UTF-8: rc {rc}, {err.strip()!r}"
    rc, out, err = audioc("tokenize", "--model", QWEN, "--decode", "9707", "999999")
    assert rc == 1 and "999999" in err, f"unknown id: rc {rc}, {err.strip()!r}"
    rc, out, err = audioc("tokenize", "--help")
    assert rc == 0 and "--decode" in out, "--help"
    rc, out, err = audioc("tokenize", "x")
    assert rc == 2 and "--model" in err, f"no model: rc {rc}"
