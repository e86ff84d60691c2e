#!/usr/bin/python3
"""Transcription on a shared machine: the default thread count against
`-t 1`, on an idle machine and with a competing CPU load (--load busy
processes at nice 0, started and stopped here). Inputs: the 4 LibriSpeech
clips of the ASR validation set in one call, and a 5 min file made of them
(sox, once, under build/bench/). The default must never be slower than -t 1.
Each figure is the median wall time of --runs runs, model load included.

usage: bench/busy_bench.py [--build DIR] [--model DIR] [--runs N] [--load N]
"""
import argparse
import glob
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
# the data folder beside the checkout (or AUDIOC_DATA)
DATA = os.environ.get("AUDIOC_DATA") or os.path.join(ROOT, "..", "shared", "data")
CLIPS = os.path.join(DATA, "asr_validation", "librispeech")


def five_minutes(work, clips):
    """The clips one after another until 5 min, as one 16 kHz WAV."""
    out = os.path.join(work, "librispeech_5min.wav")
    if not os.path.exists(out):
        os.makedirs(work, exist_ok=True)
        subprocess.run(["sox", "-D", *(clips * 14), out, "trim", "0", "300"], check=True)
    return out


def wall(audioc, model, threads, files, runs):
    times = []
    for _ in range(runs):
        cmd = [audioc, "transcribe", "-m", model, *([] if threads is None else ["-t", str(threads)]), *files]
        t0 = time.time()
        subprocess.run(cmd, check=True, capture_output=True)
        times.append(time.time() - t0)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--model", default=os.path.join(ROOT, "models", "hviske-tiny-da"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--load", type=int, default=2, help="competing busy processes")
    a = ap.parse_args()
    audioc = os.path.join(a.build, "audioc")
    clips = sorted(glob.glob(os.path.join(CLIPS, "*.wav")))
    if len(clips) != 4:
        sys.exit(f"{CLIPS}: expected 4 clips, found {len(clips)}")
    inputs = {"4 samples": clips, "5 min file": [five_minutes(os.path.join(a.build, "bench"), clips)]}
    print(f"model {os.path.basename(a.model)}, {os.cpu_count()} logical CPUs, median of {a.runs} runs\n")
    print("| competing load | input | -t 1 (s) | default (s) | default / -t 1 | load average |")
    print("|---|---|---|---|---|---|")
    worst = 0.0
    for busy in (0, a.load):
        hogs = [subprocess.Popen(["nice", "-n", "0", "/usr/bin/python3", "-c", "while True: pass"])
                for _ in range(busy)]
        try:
            time.sleep(1.0 if busy else 0)
            for name, files in inputs.items():
                one = wall(audioc, a.model, 1, files, a.runs)
                default = wall(audioc, a.model, None, files, a.runs)
                worst = max(worst, default / one)
                print(f"| {busy} busy | {name} | {one:.2f} | {default:.2f} | {default / one:.2f} | "
                      f"{os.getloadavg()[0]:.1f} |", flush=True)
        finally:
            for h in hogs:
                h.kill()
                h.wait()
    print(f"\nworst default / -t 1: {worst:.2f} ({'ok' if worst <= 1.0 else 'default slower'})")


if __name__ == "__main__":
    main()
