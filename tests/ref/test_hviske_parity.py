"""Parity of Hviske ASR (the cohere_asr layout) with the PyTorch reference in
tests/ref/hviske_asr/, on tiny random checkpoints in the exact upstream
layout with the real Cohere tokenizer (the shared packages of
tests/packages.py: F32, plus F16 and BF16 copies, and one without the
front-end tensors, and single-file GGUF packages in F16 and Q8_0 made with
tests/ref/hviske_asr/make_gguf.py), on espeak-ng Danish speech of several
lengths: 0.1 s, exactly 2 s (one padded encoder frame), ~2 s, ~4 s and
~8 s (chunked: the tiny config's chunks are 3 s), and a 44.1 kHz stereo
FLAC file.

Stage by stage (test_hviske_stages): features, subsampling, every conformer
layer, projected encoder output, prefill log-probs, sampling distribution
(scaled difference <= 1e-4), KV cache vs recomputation. End to end
(audioc transcribe): greedy ids and beam ids (3 beams) of every chunk and
the joined text equal the reference's; ids may differ only after a step
whose reference top-1 margin is below 1e-3 (a proven near-tie).
"""
import functools
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import packages
import testenv

HERE = os.path.dirname(os.path.abspath(__file__))
REF = os.path.join(HERE, "hviske_asr")
sys.path.insert(0, REF)
import gguf_np  # noqa: E402
import st_io  # noqa: E402

WORK = testenv.work("hviske_parity")
TIE = 1e-3
SENTENCES = [
    "Hej med dig, hvordan går det?",
    "Klokken er halv tre, og toget kører om ti minutter.",
    "I dag er det mandag den fjerde december. Vi skal spise frokost klokken tolv, "
    "og bagefter går vi en tur i parken, hvis det ikke regner.",
]
CLIPS = ["da0", "da1", "da2", "short", "exact2s", "stereo44k"]
# golden name: (model, clip, reference options)
GOLDENS = {**{c: ("f32", c, ()) for c in CLIPS},
           **{f"da1_{v}": (v, "da1", ()) for v in ("f16", "bf16", "nofe")},
           "da1_q8": ("q8_values", "da1", ()),
           "da1_prompt9_nopnc": ("f32", "da1", ("--prompt9", "--no-punctuation"))}
# stage comparisons: id, model, golden
STAGES = ([(c, "f32", c) for c in CLIPS] + [(f"da1 {v}", v, f"da1_{v}") for v in ("f16", "bf16", "nofe")]
          + [("da1 gguf q8_0", "gguf_q8_0", "da1_q8")])
# end to end: id, model, golden, the input (the clip as made, or at 16 kHz), audioc options
END_TO_END = ([(c, "f32", c, "orig", ()) for c in CLIPS]
              + [(f"da1 {v}", v, f"da1_{v}", "16k", ()) for v in ("f16", "bf16", "nofe")]
              + [("da1 gguf f16", "gguf_f16", "da1_f16", "16k", ()),
                 ("da1 gguf q8_0", "gguf_q8_0", "da1_q8", "16k", ()),
                 ("da1 prompt9 no-punctuation", "f32", "da1_prompt9_nopnc", "16k",
                  ("--no-prompt-prefix", "--no-punctuation"))])


def run(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    assert p.returncode == 0, f"{' '.join(cmd)}: exit {p.returncode}\n{p.stderr[-2000:]}"
    return p.stdout


def q8_values(f32, gguf):
    """An F32 safetensors package holding exactly the Q8_0 GGUF's values (read back by
    tests/ref/gguf_np.py), for the reference."""
    deq = os.path.join(WORK, "tiny_q8_values")
    if os.path.exists(deq):
        shutil.rmtree(deq)
    shutil.copytree(f32, deq)
    tensors = {t["name"]: gguf_np.values(t).astype(np.int64 if t["type"] == "I64" else np.float32)
               for t in gguf_np.read(gguf)["tensors"]}
    st_io.save(os.path.join(deq, "model.safetensors"), tensors)
    return deq


@pytest.fixture(scope="module")
def models(tokenizer):
    """The model packages by name, each made once."""
    makers = {"f32": lambda: packages.hviske(0), "f16": lambda: packages.hviske(0) + "_f16",
              "bf16": lambda: packages.hviske(0) + "_bf16", "nofe": lambda: packages.hviske(0, frontend=False),
              "gguf_f16": lambda: packages.hviske_gguf("f16"), "gguf_q8_0": lambda: packages.hviske_gguf("q8_0"),
              "q8_values": lambda: q8_values(packages.hviske(0), packages.hviske_gguf("q8_0"))}

    @functools.cache
    def get(name):
        return makers[name]()
    return get


@pytest.fixture(scope="module")
def clips(audioc):
    """espeak-ng Danish clips as made (name -> path) and at 16 kHz (name + "_16k")."""
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
    for name in CLIPS:
        clips[name + "_16k"] = os.path.join(WORK, f"{name}_16k.wav")
        run([audioc, "convert", "--rate", "16000", clips[name], clips[name + "_16k"]])
    return clips


@pytest.fixture(scope="module")
def golden(models, clips):
    """name -> (folder, result.json) of the reference run of GOLDENS[name] (3 beams), made once."""
    @functools.cache
    def get(name):
        model, clip, extra = GOLDENS[name]
        out = os.path.join(WORK, f"golden_{name}")
        run([testenv.PY, os.path.join(REF, "golden.py"), "--model", models(model), "--audio", clips[clip + "_16k"],
             "--out", out, "--beams", "3", *extra])
        with open(os.path.join(out, "result.json")) as f:
            return out, json.load(f)
    return get


@pytest.mark.parametrize("name,model,gold", STAGES, ids=[s[0] for s in STAGES])
def test_stages(name, model, gold, models, clips, golden, driver):
    """Features, subsampling, every conformer layer, the encoder output, prefill log-probs,
    the sampling distribution and the KV cache against the reference's goldens."""
    folder, _ = golden(gold)
    p = subprocess.run([driver("test_hviske_stages"), models(model), clips[GOLDENS[gold][1] + "_16k"], folder],
                       capture_output=True, text=True)
    sys.stderr.write(p.stderr)
    assert p.returncode == 0, f"{name}: stage comparison failed"


def same_ids(name, got, want, margins):
    """GOT equals WANT, or first differs after a step whose reference margin is below TIE."""
    if got == want:
        return True
    i = next((k for k, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
    if margins is not None and i < len(margins) and margins[i] < TIE:
        print(f"note: {name}: ids differ from step {i}, where the reference margin is {margins[i]:.2g}")
        return True
    raise AssertionError(f"{name}: ids differ from step {i}: {got[i:i + 5]} vs reference {want[i:i + 5]}")


def transcribe(audioc, model, clip, *extra):
    # the family's own long-form chunking (spec §5), which the reference follows
    return json.loads(run([audioc, "transcribe", "-m", model, "--no-vad", "--format", "json", "--tokens", *extra,
                           clip]))


@pytest.mark.parametrize("name,model,gold,source,extra", END_TO_END, ids=[e[0] for e in END_TO_END])
def test_end_to_end(name, model, gold, source, extra, models, clips, golden, audioc):
    """audioc transcribe: the chunks' bounds, greedy and beam ids and texts, and the joined text
    equal the reference's (ids may differ only after a proven near-tie)."""
    _, ref = golden(gold)
    clip = clips[GOLDENS[gold][1] + ("_16k" if source == "16k" else "")]
    greedy = transcribe(audioc, models(model), clip, *extra)
    beam = transcribe(audioc, models(model), clip, "--beam-size", "3", *extra)
    chunks = ref["chunks"]
    assert len(greedy["segments"]) == len(chunks), f"{name}: {len(greedy['segments'])} chunks, reference {len(chunks)}"
    for k, (g, b, c) in enumerate(zip(greedy["segments"], beam["segments"], chunks)):
        assert abs(g["start"] - c["start"] / 16000) < 1e-3 and abs(g["end"] - c["end"] / 16000) < 1e-3, \
            f"{name} chunk {k}: [{g['start']}, {g['end']}] vs reference {c['start']}..{c['end']} samples"
        same_ids(f"{name} chunk {k} greedy", g["tokens"], c["greedy_ids"], c.get("greedy_margins"))
        if g["tokens"] == c["greedy_ids"]:
            assert g["text"] == c["greedy_text"].strip(), f"{name} chunk {k}: text {g['text']!r} vs {c['greedy_text']!r}"
        if b["tokens"] != c["beam_ids"] and c.get("beam_min_gap", 1) < TIE:
            print(f"note: {name} chunk {k}: beam ids differ at a near-tie")
        else:
            same_ids(f"{name} chunk {k} beam", b["tokens"], c["beam_ids"], None)
    if all(g["tokens"] == c["greedy_ids"] for g, c in zip(greedy["segments"], chunks)):
        assert greedy["text"] == ref["greedy_text"], f"{name}: joined text {greedy['text']!r} vs {ref['greedy_text']!r}"
