#!/usr/bin/python3
"""Vevo2 speed and memory on a full-size synthetic package
(tests/ref/vevo2/make_package.py --bench: the real dimensions, F16, the AR
model BF16 as published with the real Qwen2.5 vocabulary, random weights;
~4.6 GB made once under build/bench/vevo2_full, never committed).

Whole requests, 1 and 2 threads, 32 steps, 10 s clips (espeak-ng):
- style_preserved_vc: a 10 s source in a 10 s target voice;
- style_converted_vc: the same source's words (text) and prosody, the AR in
  between;
- zero_shot_tts: a 10 s utterance (125 AR tokens: the random model is held
  to exactly that many) in the 10 s voice, the voice's transcript given.
`audioc --timings` gives seconds per stage (Whisper for every clip, pitch,
chroma, tokenizers, timbre mel, AR prefill and ms per token, flow matching
per step, vocoder), the real-time factor and the peak RSS, which is
compared with the bytes of the weights the route holds: as stored, the
tensors it maps from the package's files; with --weights T (converted on
load, each part by its family's rule), the same tensors as `audioc quantize
--type T` writes them (a GGUF made once under build/bench, read for its
tensor sizes only); "parts" is the time the parts take to load (and
convert) on the first request. bench_vevo2_fm then times FM steps at the
conversion's shape, as a fraction of the roof of the type's arithmetic and
against OpenBLAS sgemm on the same products, and bench_vevo2_stages the
Whisper encoder and the vocoder against the roofs of theirs.

usage: bench/vevo2_bench.py [--build DIR] [--seconds S] [--steps N] [--routes R,...] [--threads 1,2]
                            [--weights stored,bf16,q8_0]
"""
import argparse
import json
import os
import re
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
FM_DIR = "acoustic_modeling/fm_emilia101k_singnet7k_repa"
# what a conversion maps (the package's Whisper folder is in the port's form)
MAPPED = ["whisper-medium/model.safetensors", "tokenizer/contentstyle_fvq16384_12.5hz/model.safetensors",
          FM_DIR + "/model.safetensors", "vocoder/model.safetensors"]
AR_MAPPED = ["contentstyle_modeling/posttrained/model.safetensors",
             "tokenizer/prosody_fvq512_6.25hz/model.safetensors"]
# the GGUF namespaces of the same parts ("whisper_weights": its encoder only)
NAMESPACES = ["whisper_weights/encoder.", "content_style_tokenizer_weights/", "fm_weights/", "fm_whisper_stats/",
              "vocoder_weights_0/"]
AR_NAMESPACES = ["ar_weights/", "prosody_tokenizer_weights/"]
ROUTES = ("style_preserved_vc", "style_converted_vc", "zero_shot_tts")
TEXT = ("The quick brown fox jumps over the lazy dog, and then it runs into the forest where nobody can see it. "
        "Please call Stella and ask her to bring these things with her from the store.")


def sh(*cmd):
    return subprocess.run([str(c) for c in cmd], check=True, capture_output=True, text=True)


def clip(work, name, voice, pitch, seconds):
    raw, out = os.path.join(work, name + "_22k.wav"), os.path.join(work, name + ".wav")
    if not os.path.exists(out):
        sh("espeak-ng", "-v", voice, "-p", pitch, "-s", 150, "-w", raw, TEXT)
        sh("sox", "-D", raw, "-r", 24000, out, "pad", 0, seconds, "trim", 0, seconds)   # exactly SECONDS
    return out


def stored_mb(pkg, files):
    """MB of the tensors FILES hold (safetensors headers; Whisper's encoder only: a conversion runs no decoder)"""
    total = 0
    for f in files:
        with open(os.path.join(pkg, f), "rb") as h:
            header = json.loads(h.read(struct.unpack("<Q", h.read(8))[0]))
        total += sum(v["data_offsets"][1] - v["data_offsets"][0] for k, v in header.items()
                     if k != "__metadata__" and not (f.startswith("whisper") and not k.startswith("encoder.")))
    return total / 2**20


def converted_mb(gguf, namespaces):
    """MB of the tensors under NAMESPACES in GGUF"""
    sys.path.insert(0, os.path.join(ROOT, "tests", "ref"))
    import gguf_np
    return sum(b for name, b in gguf_np.tensor_bytes(gguf).items() if name.startswith(tuple(namespaces))) / 2**20


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--steps", type=int, default=32)
    ap.add_argument("--routes", default=",".join(ROUTES))
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--weights", default="stored")
    a = ap.parse_args()
    work = os.path.join(a.build, "bench")
    pkg = os.path.join(work, "vevo2_full")
    make = os.path.join(ROOT, "tests", "ref", "vevo2", "make_package.py")
    os.makedirs(work, exist_ok=True)
    subprocess.run(["/usr/bin/python3", make, pkg, "--bench"], check=True)   # once: parts made when missing
    held = {}   # (type, with the AR) -> MB
    for wt in a.weights.split(","):
        if wt == "stored":
            held[wt, 0], held[wt, 1] = stored_mb(pkg, MAPPED), stored_mb(pkg, MAPPED + AR_MAPPED)
            continue
        gguf = os.path.join(work, f"vevo2_full_{wt}.gguf")
        if not os.path.exists(gguf):
            print(f"writing the package as {wt} (once) for its tensor sizes ...", file=sys.stderr)
            sh(os.path.join(a.build, "audioc"), "quantize", pkg, gguf, "--type", wt, "--no-progress")
        held[wt, 0], held[wt, 1] = converted_mb(gguf, NAMESPACES), converted_mb(gguf, NAMESPACES + AR_NAMESPACES)
    src = clip(work, "bench_src", "en", 40, a.seconds)
    tgt = clip(work, "bench_tgt", "en+f3", 75, a.seconds)
    tokens = int(a.seconds * 12.5)
    for wt in a.weights.split(","):
        print(f"weights held ({wt}): {held[wt, 0]:.0f} MB by a conversion, {held[wt, 1]:.0f} MB with the AR model "
              f"and the prosody tokenizer")
    print("| route | weights | threads | parts (s) | whisper (s) | pitch (s) | chroma (s) | tokenizers (s) | timbre mel (s) | AR prefill (s) "
          "| AR (ms/token) | FM (s/step) | vocoder (s) | total (s) | RTF | peak RSS (MB) | RSS / weights | load |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for route in a.routes.split(","):
        ar = route != "style_preserved_vc"
        args = {"style_preserved_vc": ["vc", src],
                "style_converted_vc": ["vc", src, "--route", route, "--text", TEXT],
                "zero_shot_tts": ["tts", TEXT, "--voice-text", TEXT]}[route]
        if ar:
            args += ["--min-tokens", tokens, "--max-tokens", tokens]
        for wt, threads in [(wt, int(t)) for wt in a.weights.split(",") for t in a.threads.split(",")]:
            r = sh(os.path.join(a.build, "audioc"), *args, "-m", pkg, "-r", tgt, "-o",
                   os.path.join(work, "bench_out.wav"), "--steps", a.steps, "--timings", "-t", threads,
                   "--no-progress", "--weights", wt)
            t = {k.strip(): float(v) for k, v in re.findall(r"([a-zA-Z ]+) ([\d.]+) ms", r.stderr)}
            step = float(re.search(r"([\d.]+) ms/step", r.stderr).group(1)) / 1e3
            per_token = re.search(r"([\d.]+) ms/token", r.stderr)
            total = float(re.search(r"audio in ([\d.]+) ms", r.stderr).group(1)) / 1e3
            rtf = float(re.search(r"real-time factor ([\d.]+)", r.stderr).group(1))
            rss = float(re.search(r"peak RSS ([\d.]+) MB", r.stderr).group(1))
            g = lambda k: t.get(k, 0) / 1e3  # noqa: E731
            mapped = held[wt, int(ar)]
            print(f"| {route} | {wt} | {threads} | {g('parts'):.2f} | {g('whisper'):.2f} | {g('pitch'):.2f} | {g('chroma'):.3f} | "
                  f"{g('tokenizer'):.2f} | {g('timbre mel'):.3f} | {g('AR prefill'):.2f} | "
                  f"{float(per_token.group(1)) if per_token else 0:.1f} | {step:.2f} | {g('vocoder'):.2f} | "
                  f"{total:.1f} | {rtf:.2f} | {rss:.0f} | {rss / mapped:.3f} | {os.getloadavg()[0]:.1f} |", flush=True)
    # the FM's products against sgemm at this conversion's shape
    frames = int(a.seconds * 50)
    for wt in a.weights.split(","):
        fm = sh(os.path.join(a.build, "bench_vevo2_fm"), os.path.join(pkg, FM_DIR), frames, frames, 3, wt)
        print()
        print(fm.stdout.strip())
    # the Whisper encoder and the vocoder against the roofs of their arithmetic
    for wt in a.weights.split(","):
        st = sh(os.path.join(a.build, "bench_vevo2_stages"), pkg, wt, a.seconds)
        print()
        print(st.stdout.strip())


if __name__ == "__main__":
    main()
