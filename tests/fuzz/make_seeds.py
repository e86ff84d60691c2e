#!/usr/bin/python3
"""Writes the small fuzz seeds in seeds/ (committed; rerun only to change
them). Needs sox for the FLAC, OGG, AU and AIFF seeds."""
import json
import math
import os
import struct
import subprocess
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


    sp = os.path.join(HERE, "sentencepiece")
    os.makedirs(sp, exist_ok=True)
    sentencepiece_seed(os.path.join(sp, "tiny.model"))


if __name__ == "__main__":
    main()
