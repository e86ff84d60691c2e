"""Accuracy of each weight type (`--weights`, ac_load_options.weights)
against the f32 path, per family. One command prints every table the
docs/models pages quote:

    /usr/bin/python3 tests/precision.py [FAMILY...]
    (silero marblenet hviske hviske_gguf_q8 hviske_wer hviske_v6 vevo2 vevo2_full;
     all but vevo2_full by default)

after `make build`; tests/model/test_precision.py runs the same
measurements and holds each figure at its level. The reference of each
figure is the same model loaded with --weights f32.

- silero, marblenet: the real weights (the data folder) on the four
  LibriSpeech clips; the largest |p - p_f32| of any hop's probability.
- hviske: the tiny random checkpoint of tests/packages.py (F32) on
  espeak-ng Danish clips of 2, 4 and 8 s (the 8 s one in three chunks); the
  clips and the chunks whose greedy token ids equal the f32 run's.
- hviske_gguf_q8: that checkpoint's Q8_0 GGUF package held as f32 and
  bf16 (stored lower than asked: dequantized); the clips whose ids equal
  its stored run's.
- hviske_wer: the bundled model (models/hviske-tiny-da) on the 20 held-out
  utterances of tests/model/test_tiny_da.py; WER in % (train/evaluate.py).
- hviske_v6: the tiny random v6 checkpoint of tests/packages.py (F32,
  values BF16-exact) on the same Danish clips, its default 2 beams; the
  clips whose token ids equal the f32 run's.
- vevo2: the tiny random package of tests/packages.py (F32, seed 21),
  greedy AR and the seeded FM noise, per route: the AR's generated ids
  equal to the f32 run's (as a count of its ids), and the SNR in dB of the
  flow matching's mel and of the output audio against the f32 run's.
- vevo2_full: the same on the full-size synthetic package of
  bench/vevo2_bench.py (the real dimensions, random weights: F16, the AR
  model BF16; ~4.6 GB, made once under build/bench/vevo2_full). Not in the
  default set, nor held by a test: making it takes minutes and gigabytes.
"""
import json
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "ref", "vevo2"))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "train"))
import packages  # noqa: E402
import testenv  # noqa: E402

TYPES = ("bf16", "q8_0")
WORK = os.path.join(testenv.WORK, "precision")
LIBRISPEECH = os.path.join(testenv.DATA, "asr_validation", "librispeech")
DA_SENTENCES = [
    "Hej med dig, hvordan går det?",
    "Klokken er halv tre, og toget kører om ti minutter.",
    "I dag er det mandag den fjerde december. Vi skal spise frokost klokken tolv, "
    "og bagefter går vi en tur i parken, hvis det ikke regner.",
]
# the held-out split of tests/model/test_tiny_da.py (the same folder: made once for both)
TINY_DA_SPLIT, TINY_DA_N, TINY_DA_SEED = "eval", 20, 777


def run(cmd):
    p = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, cmd))}: exit {p.returncode}\n{p.stderr[-2000:]}")
    return p.stdout


def snr_db(x, ref):
    """10 log10(|ref|^2 / |x - ref|^2); inf when equal, -inf when the lengths differ."""
    x, ref = np.asarray(x, np.float64), np.asarray(ref, np.float64)
    if x.shape != ref.shape:
        return float("-inf")
    err = float(np.sum((x - ref) ** 2))
    return float("inf") if err == 0 else 10 * np.log10(float(np.sum(ref ** 2)) / err)


# ---- VAD ------------------------------------------------------------------

def librispeech_clips():
    return sorted(os.path.join(LIBRISPEECH, f) for f in os.listdir(LIBRISPEECH) if f.endswith(".wav"))


def vad_probs(model, weights, files):
    out = run([testenv.AUDIOC, "vad", "--model", model, "--weights", weights, "--probs", "--format", "json",
               "--no-progress", *files])
    return {j["file"]: np.array(j["probs"], np.float64) for j in map(json.loads, out.splitlines())}


def vad(model):
    """{type: the largest |p - p_f32| over every hop of the clips}."""
    files = librispeech_clips()
    ref = vad_probs(model, "f32", files)
    res = {}
    for t in TYPES:
        got = vad_probs(model, t, files)
        res[t] = max(float(np.max(np.abs(got[f] - ref[f]))) if len(got[f]) == len(ref[f]) else float("inf")
                     for f in files)
    return res


def silero():
    return vad(testenv.SILERO)


def marblenet():
    return vad(testenv.MARBLE_DIR)


# ---- Hviske ---------------------------------------------------------------

def danish_clips():
    """espeak-ng Danish clips at 16 kHz, made once."""
    os.makedirs(WORK, exist_ok=True)
    files = []
    for i, text in enumerate(DA_SENTENCES):
        out = os.path.join(WORK, f"da{i}.wav")
        if not os.path.exists(out):
            raw = os.path.join(WORK, f"da{i}_raw.wav")
            run(["espeak-ng", "-v", "da", "-s", "150", "-w", raw, text])
            run(["sox", "-D", raw, "-r", "16000", "-b", "16", out])
        files.append(out)
    return files


def transcripts(model, weights, files):
    """{file: (text, [token ids of each chunk])}, greedy."""
    out = run([testenv.AUDIOC, "transcribe", "--model", model, "--weights", weights, "--format", "json", "--tokens",
               "--no-vad", "--no-progress", *files])
    return {j["file"]: (j["text"], [s["tokens"] for s in j["segments"]]) for j in map(json.loads, out.splitlines())}


def hviske():
    """{type: (clips with equal ids, clips, chunks with equal ids, chunks)} on the tiny checkpoint."""
    model, files = packages.hviske(0), danish_clips()
    ref = transcripts(model, "f32", files)
    res = {}
    for t in TYPES:
        got = transcripts(model, t, files)
        clips = sum(got[f][1] == ref[f][1] for f in files)
        chunks = sum(a == b for f in files for a, b in zip(got[f][1], ref[f][1]))
        res[t] = (clips, len(files), chunks, sum(len(ref[f][1]) for f in files))
    return res


def hviske_gguf_q8():
    """{type: (clips with the stored run's ids, clips)}: the tiny checkpoint's Q8_0 GGUF package (tests/packages.py),
    stored lower than asked, held as f32 or bf16 (dequantized)."""
    model, files = packages.hviske_gguf("q8_0"), danish_clips()
    ref = transcripts(model, "stored", files)
    res = {}
    for t in ("f32", "bf16"):
        got = transcripts(model, t, files)
        res[t] = (sum(got[f][1] == ref[f][1] for f in files), len(files))
    return res


def hviske_v6():
    """{type: (clips with equal ids, clips)} on the tiny v6 checkpoint (2 beams, its default)."""
    model, files = packages.hviske_v6("f32"), danish_clips()
    ref = transcripts(model, "f32", files)
    res = {}
    for t in TYPES:
        got = transcripts(model, t, files)
        res[t] = (sum(got[f][1] == ref[f][1] for f in files), len(files))
    return res


def held_out():
    """The held-out clips of tests/model/test_tiny_da.py and their texts."""
    data = os.path.join(testenv.work("tiny_da"), TINY_DA_SPLIT)
    if not os.path.exists(os.path.join(data, "manifest.jsonl")):
        subprocess.run([testenv.PY, os.path.join(testenv.ROOT, "train", "synth.py"), data, "--split", TINY_DA_SPLIT,
                        "-n", str(TINY_DA_N), "--seed", str(TINY_DA_SEED), "--jobs", "2"], check=True,
                       capture_output=True)
    rows = [json.loads(line) for line in open(os.path.join(data, "manifest.jsonl"), encoding="utf-8")]
    return [os.path.join(data, r["audio"]) for r in rows], [r["text"] for r in rows]


def hviske_wer():
    """{type: WER %} of the bundled model on the held-out clips, f32 included."""
    from evaluate import score
    files, refs = held_out()
    res = {}
    for t in ("f32", *TYPES):
        out = run([testenv.AUDIOC, "transcribe", "--model", testenv.BUNDLED_MODEL, "--weights", t, "--format",
                   "json", "--no-progress", *files])
        got = {j["file"]: j["text"] for j in map(json.loads, out.splitlines())}
        res[t] = score(refs, [got.get(f, "") for f in files])["wer"]
    return res


# ---- Vevo2 ----------------------------------------------------------------

VOICE_TEXT = "Please call Stella and ask her to bring these things."
SRC_TEXT = "We will meet at the station at nine."
VEVO2_STEPS, VEVO2_MAX_NEW = 8, 30
# name: route, the clip of each reference, text, options
VEVO2_ROUTES = {
    "style_preserved_vc": ("style_preserved_vc", {"source": "source", "voice": "voice"}, None, {"shift": 0}),
    "zero_shot_tts": ("zero_shot_tts", {"voice": "voice"}, "Good morning to you.", {"voice_text": VOICE_TEXT}),
    "text_to_singing": ("text_to_singing", {"voice": "voice", "prosody": "source"}, "La la la la.",
                        {"voice_text": VOICE_TEXT, "prosody_code": 1}),
    "style_converted_vc": ("style_converted_vc", {"source": "source", "voice": "voice"}, SRC_TEXT,
                           {"source_text": SRC_TEXT}),
}


def vevo2_clips():
    import route_common
    os.makedirs(WORK, exist_ok=True)
    wavs = {"voice": route_common.speech(WORK, "voice", VOICE_TEXT, "en+f3", 75, route_common.RATE, 3.3),
            "source": route_common.speech(WORK, "source", SRC_TEXT, "en", 40, route_common.RATE)}
    return {k: route_common.raw(os.path.join(WORK, k + ".f32"), route_common.load24(w)) for k, w in wavs.items()}


def vevo2_run(pkg, name, weights, clips, tag="vevo2"):
    route, roles, text, kw = VEVO2_ROUTES[name]
    out = os.path.join(WORK, f"{tag}_{name}_{weights}")
    os.makedirs(out, exist_ok=True)
    args = [f"{role}={clips[c]}" for role, c in roles.items()]
    args += [f"{k}={v}" for k, v in dict(kw, temperature=0, max_tokens=VEVO2_MAX_NEW, steps=VEVO2_STEPS,
                                         weights=weights).items()]
    if text:
        args.append(f"text={text}")
    run([testenv.driver("test_vevo2_speak"), pkg, route, out, *args])

    def read(f, dtype):
        p = os.path.join(out, f)
        return np.fromfile(p, dtype) if os.path.exists(p) else None
    return read("generated_ids", "<i4"), read("fm_mel", "<f4"), read("wav.f32", "<f4")


def vevo2(routes=None, pkg=None, tag="vevo2"):
    """{route: {type: (AR ids equal, AR ids, mel SNR dB, wav SNR dB)}} on the tiny package, or PKG (no AR: 0, 0)."""
    pkg, clips = pkg or packages.vevo2("F32", 21), vevo2_clips()
    res = {}
    for name in routes or VEVO2_ROUTES:
        ids, mel, wav = vevo2_run(pkg, name, "f32", clips, tag)
        res[name] = {}
        for t in TYPES:
            i, m, w = vevo2_run(pkg, name, t, clips, tag)
            n = 0 if ids is None else len(ids)
            same = 0 if ids is None else next((k for k in range(n) if k >= len(i) or i[k] != ids[k]), n)
            res[name][t] = (same, n, snr_db(m, mel), snr_db(w, wav))
    return res


def vevo2_full(routes=None):
    """vevo2's figures on the full-size synthetic package (made as bench/vevo2_bench.py makes it)."""
    pkg = os.path.join(testenv.BUILD, "bench", "vevo2_full")
    run([testenv.PY, os.path.join(HERE, "ref", "vevo2", "make_package.py"), pkg, "--bench"])
    return vevo2(routes, pkg, "vevo2_full")


# ---- the tables -----------------------------------------------------------

FAMILIES = {"silero": silero, "marblenet": marblenet, "hviske": hviske, "hviske_gguf_q8": hviske_gguf_q8,
            "hviske_wer": hviske_wer, "hviske_v6": hviske_v6, "vevo2": vevo2, "vevo2_full": vevo2_full}
DEFAULT = [f for f in FAMILIES if f != "vevo2_full"]


def table(name, res):
    if name in ("silero", "marblenet"):
        print(f"| {name} (real weights, 4 LibriSpeech clips) | max abs diff of p |\n|---|---|")
        for t, d in res.items():
            print(f"| {t} | {d:.2e} |")
    elif name == "hviske":
        print("| hviske tiny checkpoint (3 clips) | clips with equal ids | chunks with equal ids |\n|---|---|---|")
        for t, (c, nc, k, nk) in res.items():
            print(f"| {t} | {c}/{nc} | {k}/{nk} |")
    elif name == "hviske_gguf_q8":
        print("| hviske tiny Q8_0 GGUF held as (3 clips) | clips with the stored run's ids |\n|---|---|")
        for t, (c, nc) in res.items():
            print(f"| {t} | {c}/{nc} |")
    elif name == "hviske_v6":
        print("| hviske_v6 tiny checkpoint (3 clips, 2 beams) | clips with f32's ids |\n|---|---|")
        for t, (c, nc) in res.items():
            print(f"| {t} | {c}/{nc} |")
    elif name == "hviske_wer":
        print("| hviske-tiny-da, 20 held-out clips | WER % |\n|---|---|")
        for t, w in res.items():
            print(f"| {t} | {w:.2f} |")
    else:
        what = "full-size synthetic package" if name == "vevo2_full" else "tiny package"
        print(f"| vevo2 {what}: route | type | AR ids equal to f32 | FM mel SNR dB | wav SNR dB |\n"
              "|---|---|---|---|---|")
        for route, by_type in res.items():
            for t, (same, n, m, w) in by_type.items():
                ar = f"{same}/{n}" if n else "(no AR)"
                print(f"| {route} | {t} | {ar} | {m:.1f} | {w:.1f} |")
    print()


def main(names):
    for name in names or DEFAULT:
        if name not in FAMILIES:
            sys.exit(f"precision.py: unknown family '{name}' ({', '.join(FAMILIES)})")
        table(name, FAMILIES[name]())


if __name__ == "__main__":
    main(sys.argv[1:])
