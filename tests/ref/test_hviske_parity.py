#!/usr/bin/python3
"""Parity of Hviske ASR (cohere_asr) with the PyTorch reference in
tests/ref/hviske_asr/, on tiny random checkpoints in the exact upstream
layout with the real Cohere tokenizer (F32, plus F16 and BF16 copies, and
one without the front-end tensors, and single-file GGUF packages in F16
and Q8_0 made with tools/gguf_pack.py), on espeak-ng Danish speech of several
lengths: 0.1 s, exactly 2 s (one padded encoder frame), ~2 s, ~4 s and
~8 s (chunked: the tiny config's chunks are 3 s), and a 44.1 kHz stereo
FLAC file.

Stage by stage (test_hviske_stages): features, subsampling, every conformer
layer, projected encoder output, prefill log-probs, sampling distribution
(scaled difference <= 1e-4), KV cache vs recomputation. End to end
(audioc transcribe): greedy ids and beam ids (3 beams) of every chunk and
the joined text equal the reference's; ids may differ only after a step
whose reference top-1 margin is below 1e-3 (a proven near-tie).
Environment: AUDIOC, HVISKE_STAGES, AUDIOC_DATA, TEST_WORK.
"""
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REF = os.path.join(HERE, "hviske_asr")
AUDIOC = os.environ["AUDIOC"]
STAGES = os.environ["HVISKE_STAGES"]
DATA = os.environ.get("AUDIOC_DATA", "")
TOKENIZER = os.path.join(DATA, "cohere_asr_base/tokenizer.model")
WORK = os.path.join(os.environ["TEST_WORK"], "hviske_parity")
PY = "/usr/bin/python3"
TIE = 1e-3
SKIP = 77

failures, checks = [], 0

SENTENCES = [
    "Hej med dig, hvordan går det?",
    "Klokken er halv tre, og toget kører om ti minutter.",
    "I dag er det mandag den fjerde december. Vi skal spise frokost klokken tolv, "
    "og bagefter går vi en tur i parken, hvis det ikke regner.",
]


def check(cond, msg):
    global checks
    checks += 1
    if not cond:
        failures.append(msg)
        print("FAIL", msg, file=sys.stderr)
    return cond


def run(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {p.returncode}\n{p.stderr[-2000:]}")
    return p.stdout


def make_models():
    base = os.path.join(WORK, "tiny")
    run([PY, os.path.join(REF, "make_tiny.py"), base, "--tokenizer", TOKENIZER, "--dtypes", "f32,f16,bf16"])
    run([PY, os.path.join(REF, "make_tiny.py"), base + "_nofe", "--tokenizer", TOKENIZER, "--no-frontend-tensors"])
    return {"f32": base, "f16": base + "_f16", "bf16": base + "_bf16", "nofe": base + "_nofe"}


def make_clips():
    clips = {}
    for i, text in enumerate(SENTENCES):
        raw = os.path.join(WORK, f"da{i}_raw.wav")
        run(["espeak-ng", "-v", "da", "-s", "150", "-w", raw, text])
        clips[f"da{i}"] = os.path.join(WORK, f"da{i}.wav")
        run(["sox", "-D", raw, "-r", "16000", "-b", "16", clips[f"da{i}"]])
    # 0.1 s, and a stereo 44.1 kHz file
    clips["short"] = os.path.join(WORK, "short.wav")
    run(["sox", "-D", clips["da1"], clips["short"], "trim", "0.5", "0.1"])
    # exactly 2 s: 26 encoder frames of which 25 are valid (masks at work)
    clips["exact2s"] = os.path.join(WORK, "exact2s.wav")
    run(["sox", "-D", clips["da2"], clips["exact2s"], "trim", "0", "32000s"])
    clips["stereo44k"] = os.path.join(WORK, "stereo44k.flac")
    run(["sox", "-D", clips["da0"], "-r", "44100", "-c", "2", clips["stereo44k"]])
    return clips


def golden(model, clip16k, out, *extra):
    run([PY, os.path.join(REF, "golden.py"), "--model", model, "--audio", clip16k, "--out", out,
         "--beams", "3", *extra])
    with open(os.path.join(out, "result.json")) as f:
        return json.load(f)


def same_ids(name, got, want, margins):
    if got == want:
        return True
    i = next((k for k, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
    if margins is not None and i < len(margins) and margins[i] < TIE:
        print(f"note: {name}: ids differ from step {i}, where the reference margin is {margins[i]:.2g}",
              file=sys.stderr)
        return True
    return check(False, f"{name}: ids differ from step {i}: {got[i:i + 5]} vs reference {want[i:i + 5]}")


def transcribe(model, clip, *extra):
    # the family's own long-form chunking (spec §5), which the reference follows
    return json.loads(run([AUDIOC, "transcribe", "-m", model, "--no-vad", "--format", "json", "--tokens", *extra,
                           clip]))


def compare_end_to_end(name, model, clip, ref, extra=()):
    greedy = transcribe(model, clip, *extra)
    beam = transcribe(model, clip, "--beam-size", "3", *extra)
    chunks = ref["chunks"]
    check(len(greedy["segments"]) == len(chunks), f"{name}: {len(greedy['segments'])} chunks, reference {len(chunks)}")
    for k, (g, b, c) in enumerate(zip(greedy["segments"], beam["segments"], chunks)):
        check(abs(g["start"] - c["start"] / 16000) < 1e-3 and abs(g["end"] - c["end"] / 16000) < 1e-3,
              f"{name} chunk {k}: [{g['start']}, {g['end']}] vs reference {c['start']}..{c['end']} samples")
        ok = same_ids(f"{name} chunk {k} greedy", g["tokens"], c["greedy_ids"], c.get("greedy_margins"))
        if ok and g["tokens"] == c["greedy_ids"]:
            check(g["text"] == c["greedy_text"].strip(), f"{name} chunk {k}: text {g['text']!r} vs {c['greedy_text']!r}")
        if b["tokens"] != c["beam_ids"] and c.get("beam_min_gap", 1) < TIE:
            print(f"note: {name} chunk {k}: beam ids differ at a near-tie", file=sys.stderr)
        else:
            same_ids(f"{name} chunk {k} beam", b["tokens"], c["beam_ids"], None)
    if all(g["tokens"] == c["greedy_ids"] for g, c in zip(greedy["segments"], chunks)):
        check(greedy["text"] == ref["greedy_text"], f"{name}: joined text {greedy['text']!r} vs {ref['greedy_text']!r}")
    print(f"{name:28s} chunks {len(chunks)}  greedy {[len(g['tokens']) for g in greedy['segments']]} "
          f"beam {[len(b['tokens']) for b in beam['segments']]}")


def stages(name, model, clip16k, gold):
    p = subprocess.run([STAGES, model, clip16k, gold], capture_output=True, text=True)
    sys.stderr.write(p.stderr)
    check(p.returncode == 0, f"{name}: stage comparison failed")


def gguf_packages(models):
    """Single-file GGUF packages made with tools/gguf_pack.py: F16 (the same
    weights as the F16 safetensors copy) and Q8_0, with an F32 safetensors
    package holding exactly the Q8_0 values for the reference."""
    sys.path.insert(0, os.path.join(HERE, "../../tools"))
    sys.path.insert(0, REF)
    import gguf_pack  # noqa: E402
    import numpy as np  # noqa: E402
    import st_io  # noqa: E402
    out = {}
    for kind in ("f16", "q8_0"):
        out[kind] = os.path.join(WORK, f"tiny_{kind}.gguf")
        run([PY, os.path.join(HERE, "../../tools/gguf_pack.py"), models["f32"], out[kind], "--type", kind])
    deq = os.path.join(WORK, "tiny_q8_values")
    if os.path.exists(deq):
        shutil.rmtree(deq)
    shutil.copytree(models["f32"], deq)
    tensors = {}
    for name, src, shape, arr in gguf_pack.read_safetensors(os.path.join(models["f32"], "model.safetensors")):
        dst = gguf_pack.out_type(name, shape, src, "q8_0")
        x = np.array(arr)
        if dst == "Q8_0":
            b = gguf_pack.quantize_q8_0(gguf_pack.to_f32(src, arr))
            x = b["d"].astype(np.float32)[:, None] * b["qs"].astype(np.float32)
        elif dst == "F16":
            x = x.astype(np.float16).astype(np.float32)
        tensors[name] = x.reshape(shape)
    st_io.save(os.path.join(deq, "model.safetensors"), tensors)
    return out, deq


def main():
    if not os.path.exists(TOKENIZER):
        print(f"skipped: the Cohere tokenizer is not under {DATA or '(AUDIOC_DATA unset)'}")
        return SKIP
    os.makedirs(WORK, exist_ok=True)
    models = make_models()
    clips = make_clips()
    for name, clip in clips.items():
        clip16k = os.path.join(WORK, f"{name}_16k.wav")
        run([AUDIOC, "convert", "--rate", "16000", clip, clip16k])
        ref = golden(models["f32"], clip16k, os.path.join(WORK, f"golden_{name}"))
        stages(name, models["f32"], clip16k, os.path.join(WORK, f"golden_{name}"))
        compare_end_to_end(name, models["f32"], clip, ref)
    # weight dtypes, computed front-end tensors, prompt switches
    clip16k = os.path.join(WORK, "da1_16k.wav")
    for variant in ("f16", "bf16", "nofe"):
        gold = os.path.join(WORK, f"golden_da1_{variant}")
        ref = golden(models[variant], clip16k, gold)
        stages(f"da1 {variant}", models[variant], clip16k, gold)
        compare_end_to_end(f"da1 {variant}", models[variant], clip16k, ref)
    # single-file GGUF packages (F16 and Q8_0)
    ggufs, q8_values = gguf_packages(models)
    ref = golden(models["f16"], clip16k, os.path.join(WORK, "golden_da1_f16"))
    compare_end_to_end("da1 gguf f16", ggufs["f16"], clip16k, ref)
    gold = os.path.join(WORK, "golden_da1_q8")
    ref = golden(q8_values, clip16k, gold)
    stages("da1 gguf q8_0", ggufs["q8_0"], clip16k, gold)
    compare_end_to_end("da1 gguf q8_0", ggufs["q8_0"], clip16k, ref)
    gold = os.path.join(WORK, "golden_da1_prompt9_nopnc")
    ref = golden(models["f32"], clip16k, gold, "--prompt9", "--no-punctuation")
    compare_end_to_end("da1 prompt9 no-punctuation", models["f32"], clip16k, ref,
                       ("--no-prompt-prefix", "--no-punctuation"))
    print(f"{checks - len(failures)} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
