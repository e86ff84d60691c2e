#!/usr/bin/python3
"""Vevo2's style-preserved conversion end to end: src/models/vevo2 (through
test_vevo2_route and `audioc vc/svc`) against the PyTorch route
tests/ref/vevo2/route_ref.py, on whole random packages in the published
layout (tests/ref/vevo2/make_package.py; F32, F16, BF16) and espeak-ng
speech.

Checked:
- content-style ids of the source (chroma shifted) and of the target: equal
  except where the reference's top-2 cosine gap is < 1e-4 (reported);
- the converted audio from injected noise, max |C - ref| / max |ref| < 1e-3
  (the reference run on the C ids, so a resolved near-tie does not hide the
  rest), for a target whose length is not a multiple of 1920 samples;
- the estimated pitch shift: the semitones between the numpy YIN medians;
- `audioc vc` and `audioc svc` on 24 kHz mono WAV give the driver's audio;
  on 16 kHz, 44.1 kHz and stereo input, the reference on the samples
  `audioc convert --rate 24000` decodes; every Whisper form (the package's
  folder, medium.pt, Hugging Face's folder, ../whisper-medium beside the
  package) and both whisper_stats forms;
- the same on 1 and 2 threads, seeded noise included;
- the C API (ac_voice_convert): file, PCM and memory inputs alike, the
  progress callback over the flow-matching steps, cancel;
- bad input, each a clear message naming the file and the problem: a 0.05 s
  source, a silent source, a target voice that is not audio, --steps 0, a
  noise file of the wrong size, no Whisper encoder, a config key missing or
  of the wrong type, a truncated whisper_stats.pt, a tensor missing.
Environment: AUDIOC, VEVO2_ROUTE, TEST_WORK.
"""
import json
import os
import shutil
import sys

import numpy as np
from scipy.io import wavfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "vevo2"))
import f0_ref  # noqa: E402
import make_package  # noqa: E402
import pitch_ref  # noqa: E402
import route_ref  # noqa: E402
from checker import Checker  # noqa: E402

from route_common import AUDIOC, RATE, TOL_WAV, load24, raw, rel, run  # noqa: E402
import route_common  # noqa: E402

DRIVER = os.environ["VEVO2_ROUTE"]
WORK = os.path.join(os.environ["TEST_WORK"], "vevo2_route")
check = Checker()


def speech(name, *args, **kw):
    return route_common.speech(WORK, name, *args, **kw)


def ids_match(name, c_ids, ref):
    route_common.ids_match(check, name, c_ids, ref["ids"], ref["gaps"])


def parity(pkg, name, src, tgt, shift, ref=None, seed=7):
    """Driver against the reference: ids, then the audio from the same noise."""
    ref = ref or route_ref.Package(pkg)
    F = ref.frames(len(src), len(tgt))
    noise = np.random.default_rng(seed).standard_normal((F, ref.pre["num_mels"])).astype(np.float32)
    out = os.path.join(WORK, f"out_{name}")
    os.makedirs(out, exist_ok=True)
    fs, ft, fn = raw(out + "/src.f32", src), raw(out + "/tgt.f32", tgt), raw(out + "/noise.f32", noise)
    r = run(DRIVER, pkg, fs, ft, shift, fn, out)
    if not check(r.returncode == 0, f"{name}: driver failed: {r.stderr.strip()}"):
        return None
    c_src = np.fromfile(out + "/src_ids.i32", "<i4")
    c_tgt = np.fromfile(out + "/tgt_ids.i32", "<i4")
    s_ref, t_ref = ref.content_style(src, shift), ref.content_style(tgt, 0)
    ids_match(f"{name} source ids (shift {shift})", c_src, s_ref)
    ids_match(f"{name} target ids", c_tgt, t_ref)
    got = ref.convert(src, tgt, shift, noise, ids=np.concatenate([c_tgt, c_src]))
    wav = np.fromfile(out + "/wav.f32", "<f4")
    e = rel(wav, got["wav"])
    print(f"{name}: audio {len(wav)} samples ({F} frames), max rel diff {e:.2e} (tolerance {TOL_WAV})")
    check(len(wav) == F * 480 and e < TOL_WAV, f"{name}: audio differs: {e:.3e}, {len(wav)} vs {F * 480} samples")
    return {"ref": ref, "noise": noise, "noise_file": fn, "wav": wav}


def expected_shift(src, tgt):
    f = lambda x: f0_ref.median_voiced(f0_ref.track(pitch_ref.soxr_resample(x, RATE, 16000))[0])  # noqa: E731
    return f0_ref.semitone_shift(f(tgt), f(src))


def cli(pkg, *args):
    return run(AUDIOC, "vc", "-m", pkg, *args)


def cli_forms(pkg, base, src_wav, tgt_wav, shift):
    """audioc vc/svc on files: the driver's audio, whatever the Whisper form."""
    out = os.path.join(WORK, "cli.wav")
    common = ["-r", tgt_wav, src_wav, "--pitch-shift", shift, "--fm-noise", base["noise_file"], "--float", "-o", out]
    for cmd in ("vc", "svc"):
        r = run(AUDIOC, cmd, "-m", pkg, *common, "--timings", "--no-progress")
        check(r.returncode == 0 and "timings:" in r.stderr and "flow matching" in r.stderr,
              f"audioc {cmd}: {r.stderr.strip()[:400]}")
        if r.returncode == 0:
            y = wavfile.read(out)[1]
            check(rel(y, base["wav"]) < 1e-6, f"audioc {cmd} differs from the driver: {rel(y, base['wav']):.2e}")
    forms = {"medium.pt": os.path.join(pkg, "whisper-medium", "medium.pt"),
             "Hugging Face folder": os.path.join(pkg, "openai", "whisper-medium")}
    for name, path in forms.items():
        r = cli(pkg, "--whisper", path, *common)
        ok = check(r.returncode == 0, f"--whisper {name}: {r.stderr.strip()[:300]}")
        if ok:
            y = wavfile.read(out)[1]
            # medium.pt holds F16 weights: the same conversion on rounded weights
            tol = 1e-6 if "Hugging" in name else 0.05
            check(rel(y, base["wav"]) < tol, f"--whisper {name}: differs by {rel(y, base['wav']):.2e}")
    # 16-bit PCM output by default
    r = cli(pkg, "-r", tgt_wav, src_wav, "--pitch-shift", shift, "--fm-noise", base["noise_file"], "-o", out)
    if check(r.returncode == 0, f"16-bit output: {r.stderr.strip()[:300]}"):
        rate, y = wavfile.read(out)
        check(rate == RATE and y.dtype == np.int16 and len(y) == len(base["wav"]), f"16-bit output: {rate} {y.dtype}")


def sibling_whisper(pkg, src_wav, tgt_wav):
    """../whisper-medium beside the package, and the .pt stats alone."""
    alone = os.path.join(WORK, "alone")
    shutil.rmtree(alone, ignore_errors=True)
    os.makedirs(alone)
    p = os.path.join(alone, "vevo2")
    shutil.copytree(pkg, p)
    shutil.move(os.path.join(p, "whisper-medium"), os.path.join(alone, "whisper-medium"))
    os.remove(os.path.join(p, route_ref.FM_DIR, "whisper_stats.safetensors"))
    out = os.path.join(WORK, "alone.wav")
    a = run(AUDIOC, "vc", "-m", p, "-r", tgt_wav, src_wav, "--no-pitch-shift", "--float", "-o", out)
    b = run(AUDIOC, "vc", "-m", pkg, "-r", tgt_wav, src_wav, "--no-pitch-shift", "--float", "-o", out + "2.wav")
    if check(a.returncode == 0 and b.returncode == 0, f"../whisper-medium: {a.stderr.strip()[:300]} {b.stderr[:200]}"):
        check(rel(wavfile.read(out)[1], wavfile.read(out + "2.wav")[1]) == 0,
              "../whisper-medium and whisper_stats.pt give another conversion")
    return p


def other_inputs(pkg, ref, shift):
    """16 kHz, 44.1 kHz and stereo sources through audioc vc: the driver's
    audio on the samples `audioc convert --rate 24000` decodes, which
    parity() checks against the reference."""
    tgt_wav = speech("tgt44", "Please call Stella and ask her to bring these things.", "en+f3", 70, 44100)
    tgt = load24(tgt_wav)
    for name, rate, ch in (("src16", 16000, 1), ("src44", 44100, 2)):
        src_wav = speech(name, "We will meet at the station at nine.", "en", 40, rate, channels=ch)
        base = parity(pkg, name, load24(src_wav), tgt, shift, ref, seed=3)
        if not base:
            continue
        out = os.path.join(WORK, name + "_out.wav")
        r = cli(pkg, "-r", tgt_wav, src_wav, "--pitch-shift", shift, "--fm-noise", base["noise_file"], "--float",
                "-o", out)
        if check(r.returncode == 0, f"{name}: {r.stderr.strip()[:300]}"):
            e = rel(wavfile.read(out)[1], base["wav"])
            check(e < 1e-6, f"{name} ({rate} Hz, {ch} channels): audioc vc differs from the driver by {e:.2e}")


def api(pkg, base, src, tgt_wav):
    """ac_voice_convert on a file, PCM and bytes in memory; progress and cancel."""
    stereo = np.stack([src, src], axis=1).astype(np.float32)
    wav = os.path.join(WORK, "api_src.wav")
    wavfile.write(wav, RATE, stereo)
    r = run(DRIVER, "api", pkg, wav, raw(os.path.join(WORK, "api_src.f32"), stereo.reshape(-1)), tgt_wav,
            base["noise_file"])
    check(r.returncode == 0 and "api ok" in r.stdout, f"the C API: {r.stderr.strip()[:400]}")


def threads(pkg, base, src, tgt, shift):
    out = os.path.join(WORK, "t1")
    os.makedirs(out, exist_ok=True)
    fs, ft = raw(out + "/src.f32", src), raw(out + "/tgt.f32", tgt)
    r1 = run(DRIVER, pkg, fs, ft, shift, base["noise_file"], out, 1)
    w1 = np.fromfile(out + "/wav.f32", "<f4") if r1.returncode == 0 else None
    check(w1 is not None and rel(w1, base["wav"]) < 1e-5, f"1 thread differs from 2: {r1.stderr.strip()}")
    seeded = []
    for t in (1, 2):
        r = run(DRIVER, pkg, fs, ft, shift, "-", out, t)
        seeded.append(np.fromfile(out + "/wav.f32", "<f4") if r.returncode == 0 else None)
    check(seeded[0] is not None and seeded[1] is not None and rel(seeded[0], seeded[1]) < 1e-5,
          "seeded noise: 1 and 2 threads differ")


def bad_inputs(pkg, src_wav, tgt_wav, noise_file):
    out = os.path.join(WORK, "bad.wav")

    def expect(what, needle, *args, model=pkg):
        r = run(AUDIOC, "vc", "-m", model, *args, "-o", out)
        check(r.returncode in (1, 2) and needle in r.stderr and "Sanitizer" not in r.stderr
              and "runtime error" not in r.stderr, f"{what}: exit {r.returncode}, stderr: {r.stderr.strip()[:300]}")

    short = os.path.join(WORK, "short.wav")
    wavfile.write(short, RATE, (0.3 * np.sin(np.arange(1200) * 0.05)).astype(np.float32))
    silent = os.path.join(WORK, "silent.wav")
    wavfile.write(silent, RATE, np.zeros(3 * RATE, np.float32))
    text = os.path.join(WORK, "not_audio.wav")
    open(text, "w").write("this is not audio\n" * 100)
    expect("0.05 s source", "too short", "-r", tgt_wav, short)
    expect("silent source", "silent", "-r", tgt_wav, silent)
    expect("a target voice that is not audio", "not_audio.wav", "-r", text, src_wav)
    expect("--steps 0", "--steps", "-r", tgt_wav, src_wav, "--steps", "0")
    expect("noise of the wrong size", "noise.f32", "-r", tgt_wav, src_wav, "--fm-noise", noise_file + ".short")
    expect("no target voice", "--target-voice", src_wav)
    # broken packages
    broken = os.path.join(WORK, "broken")

    def copy():
        shutil.rmtree(broken, ignore_errors=True)
        shutil.copytree(pkg, broken)
        return broken

    b = copy()
    shutil.rmtree(os.path.join(b, "whisper-medium"))
    expect("no Whisper encoder", "--whisper", "-r", tgt_wav, src_wav, model=b)
    b = copy()
    cfg = os.path.join(b, route_ref.FM_DIR, "config.json")
    c = route_ref.vocoder_ref.read_relaxed_json(cfg)
    del c["model"]["coco"]["codebook_size"]
    json.dump(c, open(cfg, "w"))
    expect("a config key missing", "codebook_size", "-r", tgt_wav, src_wav, model=b)
    c["model"]["coco"]["codebook_size"] = "many"
    json.dump(c, open(cfg, "w"))
    expect("a config key of the wrong type", "codebook_size", "-r", tgt_wav, src_wav, model=b)
    b = copy()
    stats = os.path.join(b, route_ref.FM_DIR, "whisper_stats")
    os.remove(stats + ".safetensors")
    data = open(stats + ".pt", "rb").read()
    open(stats + ".pt", "wb").write(data[: len(data) // 2])
    expect("a truncated whisper_stats.pt", "whisper_stats.pt", "-r", tgt_wav, src_wav, model=b)
    b = copy()
    voc = os.path.join(b, "vocoder", "model.safetensors")
    t = route_ref.fm_ref.st_io.load(voc)
    del t["head.out.bias"]
    route_ref.fm_ref.st_io.save(voc, t)
    expect("a tensor missing", "head.out.bias", "-r", tgt_wav, src_wav, "--no-pitch-shift", model=b)


def main():
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    src_wav = speech("src", "We will meet at the station at nine, and then walk home.", "en", 40, RATE)
    # 3.3 s: not a multiple of 1920 samples, so T % 4 != 0
    tgt_wav = speech("tgt", "Please call Stella and ask her to bring these things.", "en+f3", 75, RATE, 3.3)
    src, tgt = load24(src_wav), load24(tgt_wav)
    assert len(tgt) % 1920 != 0
    shift = expected_shift(src, tgt)
    print(f"estimated shift (numpy YIN): {shift:+d} semitones")
    base = None
    for dtype in ("F32", "F16", "BF16"):
        pkg = make_package.make(os.path.join(WORK, "pkg_" + dtype), dtype, seed=11)
        res = parity(pkg, dtype, src, tgt, shift)
        if dtype == "F32":
            base, base_pkg = res, pkg
    if base is None:
        return check.finish()
    pkg = base_pkg
    r = run(DRIVER, pkg, base["noise_file"].replace("noise", "src"), base["noise_file"].replace("noise", "tgt"), "est",
            base["noise_file"], os.path.join(WORK, "out_F32"))
    check(r.returncode == 0 and f"shift {shift} " in r.stdout, f"estimated shift: {r.stdout.strip()} {r.stderr.strip()}")
    cli_forms(pkg, base, src_wav, tgt_wav, shift)
    sibling_whisper(pkg, src_wav, tgt_wav)
    other_inputs(pkg, base["ref"], shift)
    threads(pkg, base, src, tgt, shift)
    api(pkg, base, src, tgt_wav)
    base["noise"][:-1].tofile(base["noise_file"] + ".short")
    bad_inputs(pkg, src_wav, tgt_wav, base["noise_file"])
    return check.finish()


if __name__ == "__main__":
    sys.exit(main())
