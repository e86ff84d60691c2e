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
  package, medium.pt in openai-whisper's download folder) and both
  whisper_stats forms;
- the same on 1 and 2 threads, seeded noise included;
- the C API (ac_voice_convert): file, PCM and memory inputs alike, the
  progress callback over the flow-matching steps, cancel;
- bad input, each a clear message naming the file and the problem: a 0.05 s
  source, a silent source, a target voice that is not audio, --steps 0, a
  noise file of the wrong size, no Whisper encoder, a config key missing or
  of the wrong type, a truncated whisper_stats.pt, a tensor missing.
"""
import functools
import json
import os
import re
import shutil
import sys
from types import SimpleNamespace

import numpy as np
import pytest
from scipy.io import wavfile

import testenv

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "vevo2"))
import f0_ref  # noqa: E402
import pitch_ref  # noqa: E402
import route_common  # noqa: E402
import route_ref  # noqa: E402
from route_common import RATE, TOL_WAV, load24, raw, rel, run  # noqa: E402

WORK = os.path.join(testenv.WORK, "vevo2_route")
DTYPES = ["F32", "F16", "BF16"]


def check(cond, msg):
    assert cond, msg


def speech(name, *args, **kw):
    return route_common.speech(WORK, name, *args, **kw)


def expected_shift(src, tgt):
    f = lambda x: f0_ref.median_voiced(f0_ref.track(pitch_ref.soxr_resample(x, RATE, 16000))[0])  # noqa: E731
    return f0_ref.semitone_shift(f(tgt), f(src))


@pytest.fixture(scope="module")
def route(driver):
    return driver("test_vevo2_route")


@pytest.fixture(scope="module")
def voices(audioc):
    """The espeak-ng source and target (3.3 s: not a multiple of 1920 samples, so T % 4 != 0)
    as WAVs and as the model sees them, and the shift the numpy YIN medians give."""
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    src_wav = speech("src", "We will meet at the station at nine, and then walk home.", "en", 40, RATE)
    tgt_wav = speech("tgt", "Please call Stella and ask her to bring these things.", "en+f3", 75, RATE, 3.3)
    src, tgt = load24(src_wav), load24(tgt_wav)
    assert len(tgt) % 1920 != 0
    shift = expected_shift(src, tgt)
    print(f"estimated shift (numpy YIN): {shift:+d} semitones")
    return SimpleNamespace(src_wav=src_wav, tgt_wav=tgt_wav, src=src, tgt=tgt, shift=shift)


@pytest.fixture(scope="module")
def refs():
    """The PyTorch route of a package, loaded once per package."""
    return functools.cache(route_ref.Package)


@pytest.fixture(scope="module")
def converted(route, refs):
    """The driver's conversion (name, package, source, target, shift, noise seed), run once per
    name (the samples, arrays, are no cache key): its ids and audio, the reference and the injected noise."""
    done = {}

    def get(name, pkg, src, tgt, shift, seed=7):
        if name not in done:
            ref = refs(pkg)
            F = ref.frames(len(src), len(tgt))
            noise = np.random.default_rng(seed).standard_normal((F, ref.pre["num_mels"])).astype(np.float32)
            out = os.path.join(WORK, f"out_{name}")
            os.makedirs(out, exist_ok=True)
            fs, ft, fn = raw(out + "/src.f32", src), raw(out + "/tgt.f32", tgt), raw(out + "/noise.f32", noise)
            r = run(route, pkg, fs, ft, shift, fn, out)
            assert r.returncode == 0, f"{name}: driver failed: {r.stderr.strip()}"
            done[name] = {"ref": ref, "noise": noise, "noise_file": fn, "F": F,
                          "c_src": np.fromfile(out + "/src_ids.i32", "<i4"),
                          "c_tgt": np.fromfile(out + "/tgt_ids.i32", "<i4"),
                          "wav": np.fromfile(out + "/wav.f32", "<f4")}
        return done[name]
    return get


def check_parity(name, base, src, tgt, shift):
    """Ids against the reference, then the audio from the same noise (the reference run on the C ids)."""
    ref = base["ref"]
    s_ref, t_ref = ref.content_style(src, shift), ref.content_style(tgt, 0)
    route_common.ids_match(check, f"{name} source ids (shift {shift})", base["c_src"], s_ref["ids"], s_ref["gaps"])
    route_common.ids_match(check, f"{name} target ids", base["c_tgt"], t_ref["ids"], t_ref["gaps"])
    got = ref.convert(src, tgt, shift, base["noise"], ids=np.concatenate([base["c_tgt"], base["c_src"]]))
    wav, F = base["wav"], base["F"]
    e = rel(wav, got["wav"])
    print(f"{name}: audio {len(wav)} samples ({F} frames), max rel diff {e:.2e} (tolerance {TOL_WAV})")
    assert len(wav) == F * 480 and e < TOL_WAV, f"{name}: audio differs: {e:.3e}, {len(wav)} vs {F * 480} samples"


@pytest.fixture(scope="module")
def base(vevo2_package, voices, converted):
    """The F32 package and its conversion of the source to the target voice."""
    pkg = vevo2_package("F32", 11)
    return pkg, converted("F32", pkg, voices.src, voices.tgt, voices.shift)


@pytest.mark.parametrize("dtype", DTYPES)
def test_parity(dtype, vevo2_package, voices, converted):
    """Content-style ids equal the reference's up to near-ties, the audio within 1e-3, on the package of DTYPE."""
    pkg = vevo2_package(dtype, 11)
    check_parity(dtype, converted(dtype, pkg, voices.src, voices.tgt, voices.shift), voices.src, voices.tgt,
                 voices.shift)


def test_estimated_shift(base, voices, route):
    """The driver's estimated pitch shift is the semitones between the numpy YIN medians."""
    pkg, b = base
    r = run(route, pkg, b["noise_file"].replace("noise", "src"), b["noise_file"].replace("noise", "tgt"), "est",
            b["noise_file"], os.path.join(WORK, "out_F32"))
    assert r.returncode == 0 and f"shift {voices.shift} " in r.stdout, \
        f"estimated shift: {r.stdout.strip()} {r.stderr.strip()}"


def cli(audioc, pkg, *args):
    return run(audioc, "vc", "-m", pkg, *args)


def common_args(voices, b, out):
    return ["-r", voices.tgt_wav, voices.src_wav, "--pitch-shift", voices.shift, "--fm-noise", b["noise_file"],
            "--float", "-o", out]


@pytest.mark.parametrize("cmd", ["vc", "svc"])
def test_cli(cmd, base, voices, audioc):
    """audioc vc and svc on 24 kHz mono WAVs give the driver's audio, with timings."""
    pkg, b = base
    out = os.path.join(WORK, f"cli_{cmd}.wav")
    r = run(audioc, cmd, "-m", pkg, *common_args(voices, b, out), "--timings", "--no-progress")
    assert r.returncode == 0 and "timings:" in r.stderr and "flow matching" in r.stderr, \
        f"audioc {cmd}: {r.stderr.strip()[:400]}"
    # a process's one request loads the parts: their time is counted, not left out of every stage
    parts = re.search(r"parts ([\d.]+) ms", r.stderr)
    assert parts and float(parts.group(1)) > 0, f"audioc {cmd}: no time for the parts' load: {r.stderr[:400]}"
    y = wavfile.read(out)[1]
    assert rel(y, b["wav"]) < 1e-6, f"audioc {cmd} differs from the driver: {rel(y, b['wav']):.2e}"


# medium.pt holds F16 weights: the same conversion on rounded weights
WHISPER_FORMS = [("medium.pt", "whisper-medium/medium.pt", 0.05),
                 ("Hugging Face folder", "openai/whisper-medium", 1e-6)]


@pytest.mark.parametrize("name,sub,tol", WHISPER_FORMS, ids=[w[0] for w in WHISPER_FORMS])
def test_whisper_form(name, sub, tol, base, voices, audioc):
    """audioc vc --whisper with another form of the encoder gives the driver's audio."""
    pkg, b = base
    out = os.path.join(WORK, "cli_whisper.wav")
    r = cli(audioc, pkg, "--whisper", os.path.join(pkg, sub), *common_args(voices, b, out))
    assert r.returncode == 0, f"--whisper {name}: {r.stderr.strip()[:300]}"
    y = wavfile.read(out)[1]
    assert rel(y, b["wav"]) < tol, f"--whisper {name}: differs by {rel(y, b['wav']):.2e}"


@pytest.mark.parametrize("var", ["XDG_CACHE_HOME", "HOME"])
def test_cached_whisper(var, base, voices, audioc):
    """Without whisper-medium in or beside the package, medium.pt in openai-whisper's download
    folder ($XDG_CACHE_HOME/whisper, else ~/.cache/whisper) gives what --whisper medium.pt gives."""
    pkg, b = base
    root = os.path.join(WORK, "cache_" + var)
    shutil.rmtree(root, ignore_errors=True)
    p = os.path.join(root, "pkgs", "vevo2")
    shutil.copytree(pkg, p, ignore=shutil.ignore_patterns("whisper-medium", "openai"))
    cache = os.path.join(root, "xdg") if var == "XDG_CACHE_HOME" else os.path.join(root, "home", ".cache")
    os.makedirs(os.path.join(cache, "whisper"))
    shutil.copy(os.path.join(pkg, "whisper-medium", "medium.pt"), os.path.join(cache, "whisper"))
    env = dict(os.environ, HOME=os.path.join(root, "home"))
    env.pop("XDG_CACHE_HOME", None)
    if var == "XDG_CACHE_HOME":
        env["XDG_CACHE_HOME"] = cache
    out = os.path.join(root, "out.wav")
    r = run(audioc, "vc", "-m", p, *common_args(voices, b, out), env=env)
    assert r.returncode == 0, f"medium.pt in the cache ({var}): {r.stderr.strip()[:300]}"
    want = os.path.join(root, "want.wav")
    w = cli(audioc, pkg, "--whisper", os.path.join(pkg, "whisper-medium", "medium.pt"), *common_args(voices, b, want))
    assert w.returncode == 0, w.stderr[-300:]
    assert rel(wavfile.read(out)[1], wavfile.read(want)[1]) == 0, f"the cached medium.pt ({var}) gives another conversion"


def test_16bit_output(base, voices, audioc):
    """Without --float the output is 16-bit PCM at 24 kHz, as long as the driver's."""
    pkg, b = base
    out = os.path.join(WORK, "cli16.wav")
    r = cli(audioc, pkg, "-r", voices.tgt_wav, voices.src_wav, "--pitch-shift", voices.shift, "--fm-noise",
            b["noise_file"], "-o", out)
    assert r.returncode == 0, f"16-bit output: {r.stderr.strip()[:300]}"
    rate, y = wavfile.read(out)
    assert rate == RATE and y.dtype == np.int16 and len(y) == len(b["wav"]), f"16-bit output: {rate} {y.dtype}"


def test_sibling_whisper(base, voices, audioc):
    """../whisper-medium beside the package, and the .pt stats alone, give the same conversion."""
    pkg, _ = base
    alone = os.path.join(WORK, "alone")
    shutil.rmtree(alone, ignore_errors=True)
    os.makedirs(alone)
    p = os.path.join(alone, "vevo2")
    shutil.copytree(pkg, p)
    shutil.move(os.path.join(p, "whisper-medium"), os.path.join(alone, "whisper-medium"))
    os.remove(os.path.join(p, route_ref.FM_DIR, "whisper_stats.safetensors"))
    out = os.path.join(WORK, "alone.wav")
    a = run(audioc, "vc", "-m", p, "-r", voices.tgt_wav, voices.src_wav, "--no-pitch-shift", "--float", "-o", out)
    b = run(audioc, "vc", "-m", pkg, "-r", voices.tgt_wav, voices.src_wav, "--no-pitch-shift", "--float",
            "-o", out + "2.wav")
    assert a.returncode == 0 and b.returncode == 0, f"../whisper-medium: {a.stderr.strip()[:300]} {b.stderr[:200]}"
    assert rel(wavfile.read(out)[1], wavfile.read(out + "2.wav")[1]) == 0, \
        "../whisper-medium and whisper_stats.pt give another conversion"


@pytest.fixture(scope="module")
def tgt44():
    """The target voice at 44.1 kHz."""
    return speech("tgt44", "Please call Stella and ask her to bring these things.", "en+f3", 70, 44100)


@pytest.mark.parametrize("name,rate,ch", [("src16", 16000, 1), ("src44", 44100, 2)])
def test_other_inputs(name, rate, ch, base, voices, tgt44, converted, audioc):
    """16 kHz, 44.1 kHz and stereo sources: the driver against the reference on the samples
    `audioc convert --rate 24000` decodes, and audioc vc gives the driver's audio."""
    pkg, _ = base
    tgt = load24(tgt44)
    src_wav = speech(name, "We will meet at the station at nine.", "en", 40, rate, channels=ch)
    src = load24(src_wav)
    b = converted(name, pkg, src, tgt, voices.shift, seed=3)
    check_parity(name, b, src, tgt, voices.shift)
    out = os.path.join(WORK, name + "_out.wav")
    r = cli(audioc, pkg, "-r", tgt44, src_wav, "--pitch-shift", voices.shift, "--fm-noise", b["noise_file"], "--float",
            "-o", out)
    assert r.returncode == 0, f"{name}: {r.stderr.strip()[:300]}"
    e = rel(wavfile.read(out)[1], b["wav"])
    assert e < 1e-6, f"{name} ({rate} Hz, {ch} channels): audioc vc differs from the driver by {e:.2e}"


def test_threads(base, voices, route):
    """1 and 2 threads agree within 1e-5, with injected and with seeded noise."""
    pkg, b = base
    out = os.path.join(WORK, "t1")
    os.makedirs(out, exist_ok=True)
    fs, ft = raw(out + "/src.f32", voices.src), raw(out + "/tgt.f32", voices.tgt)
    r1 = run(route, pkg, fs, ft, voices.shift, b["noise_file"], out, 1)
    w1 = np.fromfile(out + "/wav.f32", "<f4") if r1.returncode == 0 else None
    assert w1 is not None and rel(w1, b["wav"]) < 1e-5, f"1 thread differs from 2: {r1.stderr.strip()}"
    seeded = []
    for t in (1, 2):
        r = run(route, pkg, fs, ft, voices.shift, "-", out, t)
        seeded.append(np.fromfile(out + "/wav.f32", "<f4") if r.returncode == 0 else None)
    assert seeded[0] is not None and seeded[1] is not None and rel(seeded[0], seeded[1]) < 1e-5, \
        "seeded noise: 1 and 2 threads differ"


def test_api(base, voices, route):
    """ac_voice_convert on a file, PCM and bytes in memory alike; progress and cancel."""
    pkg, b = base
    stereo = np.stack([voices.src, voices.src], axis=1).astype(np.float32)
    wav = os.path.join(WORK, "api_src.wav")
    wavfile.write(wav, RATE, stereo)
    r = run(route, "api", pkg, wav, raw(os.path.join(WORK, "api_src.f32"), stereo.reshape(-1)), voices.tgt_wav,
            b["noise_file"])
    assert r.returncode == 0 and "api ok" in r.stdout, f"the C API: {r.stderr.strip()[:400]}"


def write_short(path):
    wavfile.write(path, RATE, (0.3 * np.sin(np.arange(1200) * 0.05)).astype(np.float32))


def write_silent(path):
    wavfile.write(path, RATE, np.zeros(3 * RATE, np.float32))


def write_text(path):
    with open(path, "w") as f:
        f.write("this is not audio\n" * 100)


def made(name, write):
    path = os.path.join(WORK, name)
    write(path)
    return path


BAD_ARGS = [  # what, the message names, the arguments (v: voices, n: the injected noise file)
    ("0.05 s source", "too short", lambda v, n: ["-r", v.tgt_wav, made("short.wav", write_short)]),
    ("silent source", "silent", lambda v, n: ["-r", v.tgt_wav, made("silent.wav", write_silent)]),
    ("a target voice that is not audio", "not_audio.wav",
     lambda v, n: ["-r", made("not_audio.wav", write_text), v.src_wav]),
    ("--steps 0", "--steps", lambda v, n: ["-r", v.tgt_wav, v.src_wav, "--steps", "0"]),
    ("noise of the wrong size", "noise.f32", lambda v, n: ["-r", v.tgt_wav, v.src_wav, "--fm-noise", n + ".short"]),
    ("no target voice", "--target-voice", lambda v, n: [v.src_wav]),
]


def expect(audioc, what, needle, args, model):
    # an empty openai-whisper cache: the machine's own must not stand in for a missing encoder
    env = dict(os.environ, HOME=os.path.join(WORK, "no_home"), XDG_CACHE_HOME=os.path.join(WORK, "no_cache"))
    r = run(audioc, "vc", "-m", model, *args, "-o", os.path.join(WORK, "bad.wav"), env=env)
    assert r.returncode in (1, 2) and needle in r.stderr and "Sanitizer" not in r.stderr \
        and "runtime error" not in r.stderr, f"{what}: exit {r.returncode}, stderr: {r.stderr.strip()[:300]}"


@pytest.mark.parametrize("what,needle,args", BAD_ARGS, ids=[b[0] for b in BAD_ARGS])
def test_bad_input(what, needle, args, base, voices, audioc):
    """Bad input is refused with a clear message naming the file or option."""
    pkg, b = base
    b["noise"][:-1].tofile(b["noise_file"] + ".short")
    expect(audioc, what, needle, args(voices, b["noise_file"]), pkg)


def no_whisper(b):
    shutil.rmtree(os.path.join(b, "whisper-medium"))


def fm_config(b, edit):
    cfg = os.path.join(b, route_ref.FM_DIR, "config.json")
    c = route_ref.vocoder_ref.read_relaxed_json(cfg)
    edit(c["model"]["coco"])
    with open(cfg, "w") as f:
        json.dump(c, f)


def truncated_stats(b):
    stats = os.path.join(b, route_ref.FM_DIR, "whisper_stats")
    os.remove(stats + ".safetensors")
    with open(stats + ".pt", "rb") as f:
        data = f.read()
    with open(stats + ".pt", "wb") as f:
        f.write(data[: len(data) // 2])


def no_vocoder_bias(b):
    voc = os.path.join(b, "vocoder", "model.safetensors")
    t = route_ref.fm_ref.st_io.load(voc)
    del t["head.out.bias"]
    route_ref.fm_ref.st_io.save(voc, t)


BROKEN = [  # what, how the copy of the package is broken, the message names, extra arguments
    ("no Whisper encoder", no_whisper, "--whisper", []),
    ("a config key missing", lambda b: fm_config(b, lambda c: c.pop("codebook_size")), "codebook_size", []),
    ("a config key of the wrong type", lambda b: fm_config(b, lambda c: c.update(codebook_size="many")),
     "codebook_size", []),
    ("a truncated whisper_stats.pt", truncated_stats, "whisper_stats.pt", []),
    ("a tensor missing", no_vocoder_bias, "head.out.bias", ["--no-pitch-shift"]),
]


@pytest.mark.parametrize("what,breaks,needle,extra", BROKEN, ids=[b[0] for b in BROKEN])
def test_broken_package(what, breaks, needle, extra, base, voices, audioc):
    """A broken package is refused with a clear message naming the file and the problem."""
    pkg, _ = base
    broken = os.path.join(WORK, "broken")
    shutil.rmtree(broken, ignore_errors=True)
    shutil.copytree(pkg, broken)
    breaks(broken)
    expect(audioc, what, needle, ["-r", voices.tgt_wav, voices.src_wav, *extra], broken)
