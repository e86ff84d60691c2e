#!/usr/bin/python3
"""VAD speed and memory: real-time factor and peak RSS of `audioc vad` on
about 12 minutes of speech with pauses, for each family and 1 and 2
threads (best of 3 runs; model load excluded from the RTF, included in RSS).

usage: bench/vad_bench.py [AUDIOC] [--data DIR] [--runs N]
Writes its audio under build/bench/ and prints a Markdown table.
"""
import argparse
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def make_audio(data, out_dir):
    """LibriSpeech and espeak-ng speech, concatenated to >= 10 minutes."""
    path = os.path.join(out_dir, "speech_12min.wav")
    if os.path.exists(path):
        return path
    speech = os.path.join(out_dir, "speech")
    subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "tests/ref/make_speech.py"), speech],
                   check=True, capture_output=True)
    libri = os.path.join(data, "asr_validation/librispeech")
    parts = sorted(os.path.join(libri, f) for f in os.listdir(libri) if f.endswith(".wav"))
    parts += sorted(os.path.join(speech, f) for f in os.listdir(speech) if f.endswith("16k_mono.wav"))
    one = os.path.join(out_dir, "one_pass.wav")
    subprocess.run(["sox"] + parts + [one], check=True)
    seconds = float(subprocess.run(["soxi", "-D", one], capture_output=True, text=True).stdout)
    repeats = int(600 / seconds) + 1
    subprocess.run(["sox", one, path, "repeat", str(repeats)], check=True)
    return path


def run(audioc, model, audio, threads):
    p = subprocess.run([audioc, "vad", "--timings", "-t", str(threads), "-m", model, audio],
                       capture_output=True, text=True, check=True)
    dur, ms = map(float, re.search(r"([\d.]+) s of audio in ([\d.]+) ms", p.stderr).groups())
    rss = float(re.search(r"peak RSS ([\d.]+) MB", p.stderr).group(1))
    return dur, ms / 1000, rss


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("audioc", nargs="?", default=os.path.join(ROOT, "build/audioc"))
    ap.add_argument("--data", default=os.environ.get("AUDIOC_DATA", os.path.join(ROOT, "../shared/data")))
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    models = {"silero_vad": os.path.join(a.data, "framework/models/silero_vad"),
              "marblenet_vad": os.path.join(a.data, "framework/models/marblenet_vad")}
    if not all(os.path.isdir(m) for m in models.values()):
        sys.exit(f"bench: VAD weights not found under {a.data} (set AUDIOC_DATA)")
    out_dir = os.path.join(ROOT, "build/bench")
    os.makedirs(out_dir, exist_ok=True)
    audio = make_audio(a.data, out_dir)
    print("| family | threads | audio (s) | time (s) | real-time factor | x real time | peak RSS (MB) |")
    print("|---|---|---|---|---|---|---|")
    for family, model in models.items():
        for threads in (1, 2):
            best = min((run(a.audioc, model, audio, threads) for _ in range(a.runs)), key=lambda r: r[1])
            dur, t, rss = best
            print(f"| {family} | {threads} | {dur:.1f} | {t:.3f} | {t / dur:.5f} | {dur / t:.0f} | {rss:.1f} |")


if __name__ == "__main__":
    main()
