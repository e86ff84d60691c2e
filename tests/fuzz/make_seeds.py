#!/usr/bin/python3
"""Writes the small fuzz seeds in seeds/ (committed; rerun only to change
them). Needs sox for the FLAC, OGG, AU and AIFF seeds, ffmpeg for the
M4A, WebM and AAC ones."""
import json
import math
import os
import shutil
import struct
import subprocess
import sys
import wave

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "seeds")


def safetensors(path, tensors, meta=None, pad=0):
    """tensors: list of (name, dtype, shape, raw bytes)."""
    header, data = {}, b""
    if meta is not None:
        header["__metadata__"] = meta
    for name, dtype, shape, raw in tensors:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    h = json.dumps(header, separators=(",", ":")).encode() + b" " * pad
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + data)


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def sentencepiece_seed(path):
    """A tiny BPE model with byte fallback and special pieces, trained here
    (python3-sentencepiece) so the seed is our own."""
    import io
    import sentencepiece as spm
    text = ["hej med dig hvordan gaar det", "klokken er halv tre", "det regner i dag",
            "the quick brown fox jumps over the lazy dog"] * 20
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(text), model_writer=model, model_type="bpe",
                                   vocab_size=300, byte_fallback=True, bos_id=-1, eos_id=-1,
                                   user_defined_symbols=["<|endoftext|>", "<|da|>"],
                                   normalization_rule_name="identity", minloglevel=2)
    with open(path, "wb") as f:
        f.write(model.getvalue())


def ffmpeg_seeds():
    """Short clips in the containers src/audio/ffmpeg.c reads, and one cut short."""
    d = os.path.join(HERE, "ffmpeg")
    os.makedirs(d, exist_ok=True)
    src = ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=16000:duration=0.05"]
    for name, codec in (("tiny.m4a", ["-c:a", "aac", "-movflags", "+faststart"]), ("tiny.aac", ["-c:a", "aac"]),
                        ("tiny.webm", ["-c:a", "libopus"]), ("alac.m4a", ["-c:a", "alac"])):
        subprocess.run(["ffmpeg", "-loglevel", "error", "-y", *src, *codec, "-fflags", "+bitexact",
                        "-flags:a", "+bitexact", os.path.join(d, name)], check=True)
    with open(os.path.join(d, "tiny.m4a"), "rb") as f:
        m4a = f.read()
    with open(os.path.join(d, "cut.m4a"), "wb") as f:
        f.write(m4a[:len(m4a) * 2 // 3])
    for name in ("tiny.m4a", "tiny.webm"):   # the reader's harness sniffs them to FFmpeg
        shutil.copy(os.path.join(d, name), os.path.join(HERE, "audio", name))


def main():
    st = os.path.join(HERE, "safetensors")
    os.makedirs(st, exist_ok=True)
    f32 = struct.pack("<4f", 1.0, -2.0, 0.5, 3.25)
    f16 = struct.pack("<3e", 1.0, -2.0, 65504.0)
    safetensors(os.path.join(st, "f32_f16.safetensors"),
                [("w", "F32", [2, 2], f32), ("h", "F16", [3], f16)], {"format": "pt"}, pad=3)
    bf16 = struct.pack("<2H", 0x3F80, 0xC000)
    safetensors(os.path.join(st, "mixed.safetensors"),
                [("b", "BF16", [2], bf16), ("i", "I64", [1], struct.pack("<q", -7)),
                 ("s", "F32", [], struct.pack("<f", 2.0)), ("z", "F32", [0, 4], b"")])
    safetensors(os.path.join(st, "empty.safetensors"), [], pad=6)

    cfg = os.path.join(HERE, "config")
    os.makedirs(cfg, exist_ok=True)
    write(os.path.join(cfg, "model.json"), json.dumps({
        "sample_rate": 16000, "n_mels": 80, "threshold": 0.5, "name": "tiny", "enabled": True,
        "layers": [{"filters": 64, "kernel": [11], "dropout": 0.0}, {"filters": 128, "kernel": [13]}],
        "preprocessor": {"window_size": 0.025, "window": "hann", "dither": None, "n_fft": 512},
    }, indent=1) + "\n")
    write(os.path.join(cfg, "odd.json"),
          '{"a": -0.0, "b": 1e-7, "c": "\\u00e6\\u00f8\\u00e5 \\"q\\"", "d": [[], {}, null, false],'
          ' "e": {"f": {"g": 2147483647}}, "sample_rate": -2147483648}\n')
    write(os.path.join(cfg, "amphion.json"),
          '// Amphion writes comments\n{\n  "model": {"n_mels": 80, /* block */ "layers": [1, 2,],},\n'
          '  "name": "http://x//y /* z */", // after a string\n}\n')

    au = os.path.join(HERE, "audio")
    os.makedirs(au, exist_ok=True)
    wav = os.path.join(au, "tiny.wav")
    with wave.open(wav, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(8000)
        w.writeframes(b"".join(struct.pack("<h", int(8000 * math.sin(i / 3))) for i in range(200)))
    with wave.open(os.path.join(au, "stereo.wav"), "wb") as w:
        w.setnchannels(2)
        w.setsampwidth(1)
        w.setframerate(22050)
        w.writeframes(bytes((128 + int(60 * math.sin(i / 5))) & 255 for i in range(160)))
    for ext in ("flac", "au", "aiff"):
        subprocess.run(["sox", wav, os.path.join(au, "tiny." + ext)], check=True)
    # Vorbis headers alone are ~3.5 KB: a very short clip keeps it < 4 KB
    subprocess.run(["sox", wav, "-C", "-1", os.path.join(au, "tiny.ogg"), "trim", "0", "0.005"], check=True)
    with open(os.path.join(au, "tiny.ogg"), "rb") as f:
        ogg = f.read()
    with open(os.path.join(au, "cut.ogg"), "wb") as f:   # the identification header, the next page cut
        f.write(ogg[:ogg.index(b"OggS", 4) + 200])


    sp = os.path.join(HERE, "sentencepiece")
    os.makedirs(sp, exist_ok=True)
    sentencepiece_seed(os.path.join(sp, "tiny.model"))

    gg = os.path.join(HERE, "gguf")
    os.makedirs(gg, exist_ok=True)
    gguf_seeds(gg)

    torch_seeds = os.path.join(HERE, "torch_file")
    os.makedirs(torch_seeds, exist_ok=True)
    subprocess.run(["/usr/bin/python3", os.path.join(os.path.dirname(HERE), "..", "ref", "make_torch_files.py"),
                    "--seeds", torch_seeds], check=True)
    bpe_seeds(os.path.join(HERE, "bpe"))
    server_seeds()
    model_seeds()
    ffmpeg_seeds()


def bpe_seeds(folder):
    """Byte-level BPE tokenizer.json files (the 256 GPT-2 byte symbols, a
    few merges, added tokens), each followed by a NUL and a text."""
    os.makedirs(folder, exist_ok=True)
    printable = [b for b in range(256) if 0x21 <= b <= 0x7E or 0xA1 <= b <= 0xAC or b >= 0xAE]
    alphabet, k = {}, 0
    for b in range(256):
        if b in printable:
            alphabet[b] = chr(b)
        else:
            alphabet[b] = chr(0x100 + k)
            k += 1
    sym = lambda s: "".join(alphabet[b] for b in s.encode())  # noqa: E731
    vocab = {alphabet[b]: b for b in range(256)}
    merges = []
    for a, b in [("Ġ", "t"), ("h", "e"), ("Ġt", "he"), ("e", "r"), ("Ġ", "Ġ"), ("ĠĠ", "ĠĠ"), ("1", "2"),
                 (sym("ø")[0], sym("ø")[1])]:
        vocab[a + b] = len(vocab)
        merges.append(f"{a} {b}")
    regex = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|"
             r"\s*[\r\n]+|\s+(?!\S)|\s+")
    added = [{"id": len(vocab) + i, "content": c, "special": i < 2, "normalized": i == 3}
             for i, c in enumerate(["<|im_start|>", "<|im_end|>", "<|content_style_1|>", "\u00e9"])]
    tok = {"added_tokens": added, "normalizer": {"type": "NFC"},
           "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
               {"type": "Split", "pattern": {"Regex": regex}, "behavior": "Isolated", "invert": False},
               {"type": "ByteLevel", "add_prefix_space": False, "use_regex": False}]},
           "model": {"type": "BPE", "vocab": vocab, "merges": merges}}
    texts = {"chat.bin": "<|im_start|>user\nthe other 12 'S  \r\n\tkø e\u0301<|im_end|><|content_style_1|>",
             "emoji.bin": "\U0001F468\u200d\U0001F469 \u4f60\u597d 1234 ...!  "}
    for name, text in texts.items():
        with open(os.path.join(folder, name), "wb") as f:
            f.write(json.dumps(tok, ensure_ascii=False).encode() + b"\0" + text.encode())
    tok["model"]["merges"] = [m.split(" ") for m in merges]
    tok["model"]["ignore_merges"] = True
    with open(os.path.join(folder, "pairs.bin"), "wb") as f:
        f.write(json.dumps(tok).encode() + b"\0" + "the there".encode())


def gguf_seeds(folder):
    """Small GGUF files (src/io/gguf.c): audio.cpp's layout with logical
    names, exact shapes and embedded files; a plain ggml file aligned to 64;
    an empty version-2 file; one Q4_K and one Q6_K block."""
    def gs(text):
        b = text.encode()
        return struct.pack("<Q", len(b)) + b

    def kv(key, vtype, payload):
        return gs(key) + struct.pack("<I", vtype) + payload

    def arr(key, etype, items, fmt=None):
        body = b"".join(gs(x) for x in items) if etype == 8 else struct.pack("<%d%s" % (len(items), fmt), *items)
        return kv(key, 9, struct.pack("<IQ", etype, len(items)) + body)

    def write(name, kvs, tensors, align=32, version=3):
        """tensors: (physical name, ggml dims, ggml type, raw bytes)."""
        infos, data = b"", b""
        for tname, dims, gtype, raw in tensors:
            infos += gs(tname) + struct.pack("<I%dQIQ" % len(dims), len(dims), *dims, gtype, len(data))
            data += raw + b"\0" * (-len(raw) % align)
        head = b"GGUF" + struct.pack("<IQQ", version, len(tensors), len(kvs)) + b"".join(kvs) + infos
        with open(os.path.join(folder, name), "wb") as f:
            f.write(head + b"\0" * (-len(head) % align) + data)

    long_name = "transf_decoder._decoder.layers.0.second_sub_layer.out_projection.weight"
    q8 = struct.pack("<e", 0.5) + bytes(range(32))
    tensors = [("a", [3, 2], 0, struct.pack("<6f", 1, 2, 3, 4, 5, 6)), ("_audiocpp.1", [32, 1], 8, q8),
               ("h", [2], 1, struct.pack("<2e", 1.0, -2.0)), ("b", [2], 30, struct.pack("<2H", 0x3F80, 0xC000)),
               ("n", [1], 27, struct.pack("<q", 7))]
    files = [("config.json", b'{"sample_rate": 16000}\n'), ("tokenizer.model", bytes([10, 0, 18, 255]))]
    kvs = [kv("general.architecture", 8, gs("audiocpp")),
           arr("audiocpp.embedded_files.names", 8, [n for n, _ in files]),
           arr("audiocpp.embedded_files.offsets", 10, [0, len(files[0][1]), len(files[0][1]) + len(files[1][1])], "Q"),
           arr("audiocpp.embedded_files.data", 0, list(files[0][1] + files[1][1]), "B"),
           arr("audiocpp.tensor_names", 8, ["a", long_name, "h", "b", "num_batches_tracked"]),
           arr("audiocpp.tensor_ranks", 5, [2, 2, 1, 1, 0], "i"),
           arr("audiocpp.tensor_shapes", 11, [2, 3, 1, 32, 2, 2], "q")]
    write("audiocpp.gguf", kvs, tensors)
    kvs = [kv("general.alignment", 4, struct.pack("<I", 64)), kv("t.u8", 0, b"\xc8"), kv("t.i16", 3, b"\x00\x80"),
           kv("t.f32", 6, struct.pack("<f", 0.5)), kv("t.bool", 7, b"\x01"), kv("t.u64", 10, struct.pack("<Q", 2**64 - 1)),
           kv("t.f64", 12, struct.pack("<d", -2.25)), arr("t.strs", 8, ["x", "yy"]), arr("t.i32", 5, [1, -1], "i")]
    write("plain_align64.gguf", kvs, [("w", [4, 2], 0, struct.pack("<8f", *range(8))), ("s", [], 0, struct.pack("<f", 3)),
                                      ("z", [5, 0], 1, b"")], align=64)
    write("empty_v2.gguf", [kv("general.name", 8, gs("empty"))], [], version=2)
    q4k = struct.pack("<ee", 0.01, 0.02) + bytes(range(12)) + bytes((7 * i) & 255 for i in range(128))
    q6k = bytes((5 * i) & 255 for i in range(192)) + bytes(range(16)) + struct.pack("<e", 0.001)
    write("kquants.gguf", [kv("general.architecture", 8, gs("audiocpp"))],
          [("q4k", [256, 1], 12, q4k), ("q6k", [256], 14, q6k)])


def write_all(folder, files):
    os.makedirs(folder, exist_ok=True)
    for name, data in files.items():
        with open(os.path.join(folder, name), "wb") as f:
            f.write(data if isinstance(data, bytes) else data.encode())


def server_seeds():
    """audioc-server's parsers: multipart bodies (first byte: chunking,
    first line: boundary), request heads (one line per part), field values,
    strings for the JSON writer."""
    b = "bnd42"
    part = lambda name, value, fn=None: (  # noqa: E731
        f'--{b}\r\nContent-Disposition: form-data; name="{name}"' + (f'; filename="{fn}"' if fn else "")
        + ("\r\nContent-Type: audio/wav" if fn else "") + "\r\n\r\n").encode() + value + b"\r\n"
    body = part("model", b"tiny") + part("timestamp_granularities[]", b"word") + part("timestamp_granularities[]", b"")
    body += part("file", b"RIFF\x24\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00", "a.wav")
    body += f"--{b}--\r\n".encode()
    write_all(os.path.join(HERE, "form"), {
        "plain.bin": b"\x00" + b.encode() + b"\n" + body,
        "chunked_big.bin": b"\x03" + b.encode() + b"\n" + body,
        "empty_field.bin": b"\x01" + b.encode() + b"\n" + part("vad", b"") + f"--{b}--\r\n".encode(),
        "unterminated.bin": b"\x02" + b.encode() + b"\n" + body[:-8],
    })
    write_all(os.path.join(HERE, "admission"), {
        "upload.txt": "POST\n/v1/audio/transcriptions\nBearer s3cret\n1048576\n\n100-continue",
        "chunked.txt": "POST\n/v1/audio/vad\nbearer   s3cret\n\nchunked\n",
        "model.txt": "HEAD\n/v1/models/tiny\nBearer s3cre\n\n\n",
        "preflight.txt": "OPTIONS\n/health\n\n0\n\nfoo",
        "big.txt": "POST\n/v1/audio/vad\nBearer s3cret\n99999999999999999999\n\n",
        "speech.txt": "POST\n/v1/audio/speech\nBearer s3cret\n262145\n\n",
        "voices.txt": "HEAD\n/v1/audio/voices\nBearer s3cret\n\n\n",
    })
    write_all(os.path.join(HERE, "fields"), {
        "bool.txt": "TRUE", "number.txt": "1.5  ", "exp.txt": "-1e-300", "int.txt": "16", "hex.txt": "0x1p3",
        "nan.txt": "nan", "format.txt": "verbose_json"})
    write_all(os.path.join(HERE, "speech_request"), {
        "openai.json": '{"model":"vevo2","input":"Hello there.","voice":"alice","response_format":"wav",'
                       '"speed":1.0,"stream_format":"sse"}',
        "ours.json": '{"input":"la la","voice":{"id":"alice"},"route":"text_to_singing","prosody_voice":"hum",'
                     '"style_voice":"bob","seed":7,"temperature":0,"top_k":1,"top_p":0.5,"steps":8,"max_tokens":30,'
                     '"min_tokens":0,"repetition_penalty":1.1,"target_duration":2.5,"reference_duration":3}',
        "bad.json": '{"input":"x","voice":"a","speed":2,"input":null,"seed":1.5,"instructions":"calm"}',
        "nested.json": '[{"input":[1,{"a":"\\u0000"}]}, 1e999, "\\ud800"]'})
    write_all(os.path.join(HERE, "json_string"), {
        "ascii.txt": 'say "hi"\\ \t\n', "utf8.txt": "kø e\u0301 \U0001f600",
        "bad.bin": b"\xc0\xaf \xed\xa0\x80 \xf4\x90\x80\x80 \xe2\x82 \x00 end"})


QWEN2_PRE = {"type": "Sequence", "pretokenizers": [
    {"type": "Split", "pattern": {"Regex": "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"},
     "behavior": "Isolated", "invert": False},
    {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}]}


def v6_gguf_seed(cfg):
    """A Hviske v6 GGUF of the runtime's layout: its description, config.json CFG and a
    tokenizer.json of a few byte tokens and the prompt's added tokens, no tensors (a load
    stops at the namespace check, past the config, the tokenizer and its special ids)."""
    root = os.path.join(os.path.dirname(HERE), "..", "..")
    sys.path.insert(0, os.path.join(root, "tests", "ref"))
    import gguf_np
    added = [{"id": i, "content": t, "special": True} for t, i in
             [("<|endoftext|>", cfg["pad_token_id"]), ("<|im_start|>", cfg["bos_token_id"]),
              ("<|im_end|>", cfg["eos_token_id"])] + sorted(cfg["style_tokens"].items(), key=lambda kv: kv[1])]
    tok = {"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2, "\u0120": 3}, "merges": ["a b"]},
           "pre_tokenizer": QWEN2_PRE, "added_tokens": added}
    spec = json.dumps({"family": "hviske_asr_v6", "sources": [{"format": "gguf"}]})
    os.makedirs(os.path.join(HERE, "package"), exist_ok=True)
    gguf_np.write(os.path.join(HERE, "package", "hviske_v6_files.gguf"), [],
                  [("config.json", json.dumps(cfg).encode()), ("tokenizer.json", json.dumps(tok).encode())],
                  "BF16", sources=(("weights", "model.safetensors"),), spec=("hviske_asr_v6", spec))


def model_seeds():
    """Model configs and a whole package: the bundled Hviske config with and
    without generation_config.json (after a NUL), the real MarbleNet
    sidecar, and a tiny Hviske GGUF (random weights, 1 layer each)."""
    root = os.path.join(os.path.dirname(HERE), "..", "..")
    bundled = os.path.join(root, "models", "hviske-tiny-da")
    cfg = open(os.path.join(bundled, "config.json"), "rb").read()
    gen = open(os.path.join(bundled, "generation_config.json"), "rb").read()
    write_all(os.path.join(HERE, "hviske_config"), {"bundled.json": cfg + b"\0" + gen, "config_only.json": cfg})
    marble = os.path.join(os.environ.get("AUDIOC_DATA", os.path.join(root, "..", "shared", "data")),
                          "framework/models/marblenet_vad/marblenet_vad_config.json")
    write_all(os.path.join(HERE, "marblenet_config"), {"marblenet.json": open(marble, "rb").read()})
    sys_path = os.path.join(root, "tests", "ref", "hviske_v6")
    import sys as _sys
    _sys.path.insert(0, sys_path)
    import make_tiny as v6
    import json as _json
    tiny = v6.config()
    full = v6.config()
    full["whisper"].update({"d_model": 1280, "encoder_ffn_dim": 5120, "encoder_layers": 32,
                            "encoder_attention_heads": 20, "encoder_rotary_dim": 56})
    full["qwen"].update({"hidden_size": 1024, "intermediate_size": 3072, "num_hidden_layers": 28,
                         "num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 128})
    write_all(os.path.join(HERE, "hviske_v6_config"), {"tiny.json": _json.dumps(tiny), "full.json": _json.dumps(full)})
    v6_gguf_seed(tiny)

    import sys
    import tempfile
    sys.path.insert(0, os.path.join(root, "tests", "ref", "hviske_asr"))
    import make_tiny as mt
    mt.E, mt.E_LAYERS, mt.E_HEADS, mt.SUB_C, mt.K = 16, 1, 2, 4, 3
    mt.D, mt.D_INNER, mt.D_LAYERS, mt.D_HEADS, mt.P = 8, 16, 1, 2, 32
    with tempfile.TemporaryDirectory() as tmp:
        sys.argv = ["make_tiny", os.path.join(tmp, "pkg"), "--tokenizer", os.path.join(bundled, "tokenizer.model"),
                    "--no-frontend-tensors"]
        mt.main()
        os.makedirs(os.path.join(HERE, "package"), exist_ok=True)
        subprocess.run(["/usr/bin/python3", os.path.join(root, "tests", "ref", "hviske_asr", "make_gguf.py"),
                        os.path.join(tmp, "pkg"), os.path.join(HERE, "package", "hviske_tiny.gguf"), "--type", "f16"],
                       check=True)
    # a Vevo2 GGUF of the runtime's layout with its description and configs but no tensors
    # and no tokenizer (weights and the tokenizer load on a route's first call, not at load)
    ref = os.path.join(root, "tests", "ref", "vevo2")
    sys.path.insert(0, ref)
    import make_gguf
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["/usr/bin/python3", os.path.join(ref, "make_package.py"), tmp], check=True)
        ar = "contentstyle_modeling/posttrained/"
        make_gguf.make(tmp, os.path.join(HERE, "package", "vevo2_configs.gguf"), drop=tuple(make_gguf.PARTS),
                       drop_files=tuple(ar + f for f in ("tokenizer.json", "vocab.json", "merges.txt",
                                                          "tokenizer_config.json", "added_tokens.json",
                                                          "special_tokens_map.json")))


if __name__ == "__main__":
    main()
