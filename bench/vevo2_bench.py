#!/usr/bin/python3
"""Vevo2 voice conversion speed and memory on a full-size synthetic package
(tests/ref/vevo2/make_package.py --full: the real dimensions, F16, random
weights; ~3.6 GB made once under build/bench/vevo2_full, never committed).

For a 10 s source and a 10 s target voice (espeak-ng), 32 steps, 1 and 2
threads, `audioc vc --timings` gives seconds per stage (Whisper for both
clips, pitch, chroma, tokenizer, timbre mel, flow matching per step,
vocoder), the real-time factor and the peak RSS, which is compared with the
bytes of the weights it maps. bench_vevo2_fm then times FM steps at the
same shape against OpenBLAS sgemm on the same products.

usage: bench/vevo2_bench.py [--build DIR] [--seconds S] [--steps N]
"""
import argparse
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
FM_DIR = "acoustic_modeling/fm_emilia101k_singnet7k_repa"
# what a conversion maps (the package's Whisper folder is in the port's form)
MAPPED = ["whisper-medium/model.safetensors", "tokenizer/contentstyle_fvq16384_12.5hz/model.safetensors",
          FM_DIR + "/model.safetensors", "vocoder/model.safetensors"]
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--steps", type=int, default=32)
    a = ap.parse_args()
    work = os.path.join(a.build, "bench")
    pkg = os.path.join(work, "vevo2_full")
    os.makedirs(work, exist_ok=True)
    if not os.path.exists(os.path.join(pkg, "vocoder", "model.safetensors")):
        print("making the full-size F16 package (once, ~3.6 GB) ...", file=sys.stderr)
        sh("/usr/bin/python3", os.path.join(ROOT, "tests", "ref", "vevo2", "make_package.py"), pkg, "--full",
           "--dtype", "F16")
    mapped = sum(os.path.getsize(os.path.join(pkg, f)) for f in MAPPED) / 2**20
    src = clip(work, "bench_src", "en", 40, a.seconds)
    tgt = clip(work, "bench_tgt", "en+f3", 75, a.seconds)
    print(f"weights mapped by a conversion: {mapped:.0f} MB (F16)")
    print("| threads | whisper (s) | pitch (s) | chroma (s) | tokenizer (s) | timbre mel (s) | FM (s/step) | "
          "vocoder (s) | total (s) | RTF | peak RSS (MB) | RSS / weights |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for threads in (1, 2):
        r = sh(os.path.join(a.build, "audioc"), "vc", "-m", pkg, "-r", tgt, src, "-o",
               os.path.join(work, "bench_out.wav"), "--steps", a.steps, "--timings", "-t", threads, "--no-progress")
        t = {k.strip(): float(v) for k, v in re.findall(r"([a-z ]+) ([\d.]+) ms", r.stderr)}
        step = float(re.search(r"([\d.]+) ms/step", r.stderr).group(1)) / 1e3
        total = float(re.search(r"audio in ([\d.]+) ms", r.stderr).group(1)) / 1e3
        rtf = float(re.search(r"real-time factor ([\d.]+)", r.stderr).group(1))
        rss = float(re.search(r"peak RSS ([\d.]+) MB", r.stderr).group(1))
        g = lambda k: t.get(k, 0) / 1e3  # noqa: E731
        print(f"| {threads} | {g('whisper'):.2f} | {g('pitch'):.2f} | {g('chroma'):.3f} | {g('tokenizer'):.2f} | "
              f"{g('timbre mel'):.3f} | {step:.2f} | {g('vocoder'):.2f} | {total:.1f} | {rtf:.2f} | {rss:.0f} | "
              f"{rss / mapped:.3f} |")
    # the FM's products against sgemm at this conversion's shape
    frames = int(a.seconds * 50)
    fm = sh(os.path.join(a.build, "bench_vevo2_fm"), os.path.join(pkg, FM_DIR), frames, frames, 3)
    print()
    print(fm.stdout.strip())


if __name__ == "__main__":
    main()
