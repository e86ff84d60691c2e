"""Vevo2's AR routes end to end: src/models/vevo2 (through
test_vevo2_speak) against the PyTorch path A (tests/ref/vevo2/speak_ref.py)
on a whole random package in the published layout, espeak-ng speech and a
hummed melody. Greedy AR (temperature 0) and injected FM noise make every
stage comparable.

Checked for each of the nine AR routes, with the references as a user of
that route gives them:
- prosody ids (the style reference's, then the prosody reference's, chroma
  shifted and stretched to a target duration), the style's and the
  timbre's content-style ids: equal except at VQ near-ties (< 1e-4);
- the prompt, byte for byte as spec §4.6 builds it (and on fixed texts, with
  the continuation parser: tags in order, broken ones skipped, a code past
  the codebook an error, no tag zero ids), and its ids equal to
  Hugging Face tokenizers' (the Rust library through Node);
- the AR's greedy continuation equal to HF generate's over the PyTorch
  Qwen2, each generated id's log-probability within 1e-4, and the parsed
  content-style ids;
- the audio from injected noise, max |C - ref| / max |ref| < 1e-3;
- estimated shifts: the semitones between the numpy YIN medians;
- --speed: the audio time-stretched as librosa's time_stretch (1e-2, the
  tolerance test_vevo2_pitch explains);
- long text in several chunks, each its own prompt and audio; a seeded,
  sampled run the same on 1 and 2 threads.
"""
import functools
import os
import shutil
import sys
from types import SimpleNamespace

import numpy as np
import pytest
from scipy.io import wavfile

import testenv

torch = pytest.importorskip("torch")

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "vevo2"))
import ar_ref  # noqa: E402
import f0_ref  # noqa: E402
import pitch_ref  # noqa: E402
import route_common  # noqa: E402
import speak_ref  # noqa: E402
from route_common import RATE, TOL_WAV, load24, raw, rel, run  # noqa: E402

WORK = os.path.join(testenv.WORK, "vevo2_speak")
STEPS = 8
MAX_NEW = 30
TOL_LOGPROB = 1e-4   # the AR's logits, as the Qwen2 parity test holds them
TOL_STRETCH = 1e-2   # librosa's float32 phase accumulator (test_vevo2_pitch: the same tolerance)
GREEDY = {"temperature": 0, "max_tokens": MAX_NEW, "steps": STEPS}
VOICE_TEXT = "Please call Stella and ask her to bring these things."
SRC_TEXT = "We will meet at the station at nine."
STYLE_TEXT = "I can not believe you did that again!"
VT, SV, SS = {"voice": VOICE_TEXT}, {"style": STYLE_TEXT}, {"source": SRC_TEXT}


def check(cond, msg):
    assert cond, msg


def speech(name, *args, **kw):
    return route_common.speech(WORK, name, *args, **kw)


def hum(seconds=2.4, seed=3):
    """A hummed melody: a few notes of a harmonic tone, softly noisy."""
    rng = np.random.default_rng(seed)
    notes = [220.0, 246.9, 277.2, 246.9, 196.0, 220.0]
    n = int(seconds * RATE)
    f = np.repeat(notes, -(-n // len(notes)))[:n]
    phase = 2 * np.pi * np.cumsum(f) / RATE
    x = sum(np.sin(k * phase) / k for k in range(1, 6)) * 0.2 + 0.003 * rng.standard_normal(n)
    return x.astype(np.float32)


def expected_shift(x, timbre):
    f = lambda y: f0_ref.median_voiced(f0_ref.track(pitch_ref.soxr_resample(y, RATE, 16000))[0])  # noqa: E731
    return f0_ref.semitone_shift(f(timbre), f(x))


def read(out, name, dtype="<i4"):
    path = os.path.join(out, name)
    return np.fromfile(path, dtype) if os.path.exists(path) else None


@pytest.fixture(scope="module")
def speak(driver):
    return driver("test_vevo2_speak")


@pytest.fixture(scope="module")
def S(vevo2_package, audioc):
    """The F32 package (seed 21), its PyTorch path A, the espeak-ng voices as WAVs and as the
    model sees them, the hum, and whether Hugging Face's tokenizer (through Node) is there."""
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    pkg = vevo2_package("F32", 21)
    wavs = {"voice": speech("voice", VOICE_TEXT, "en+f3", 75, RATE, 3.3),
            "source": speech("source", SRC_TEXT, "en", 40, RATE),
            "style": speech("style", STYLE_TEXT, "en+m3", 60, RATE)}
    clips = {k: load24(w) for k, w in wavs.items()}
    clips["hum"] = hum()
    with open(os.path.join(WORK, "not_audio.txt"), "w") as f:
        f.write("not audio at all\n" * 50)
    oracle = ar_ref.oracle_available()
    if not oracle:
        print("SKIP prompt ids against Hugging Face: tests/node has no @anush008/tokenizers (scripts/setup.sh)")
    return SimpleNamespace(pkg=pkg, ref=speak_ref.Speaker(pkg), wavs=wavs, clips=clips, oracle=oracle)


def test_parse(speak):
    """The prompt builder and the continuation parser on fixed texts (the driver's checks)."""
    r = run(speak, "parse")
    assert r.returncode == 0 and "parse ok" in r.stdout, f"the prompt and the parser: {r.stderr.strip()[-400:]}"


def drive(speak, pkg, name, route, clips, args, noise=None):
    """The driver on CLIPS ({key: samples}) and ARGS; its output folder, the run asserted to succeed."""
    out = os.path.join(WORK, name + ("_noise" if noise is not None else ""))
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    kv = [f"{k}={raw(os.path.join(out, k + '.f32'), x)}" for k, x in clips.items()]
    kv += [f"{k}={v}" for k, v in args.items()]
    if noise is not None:
        kv.append("noise=" + raw(os.path.join(out, "noise.f32"), noise))
    r = run(speak, pkg, route, out, *kv)
    assert r.returncode == 0, f"{name}: driver failed: {r.stderr.strip()[-400:]}"
    return out


def speak_case(speak, S, name, route, roles, text, texts, use_prosody=None, shift=0, style_shift=0,
               target_duration=None, reference_duration=None):
    """One route against the reference, every stage; ROLES names the clip of each reference, TEXTS
    the transcripts {style, voice, source}. The result, with the audio unless ids resolved
    differently at a near-tie."""
    ref, clips = S.ref, {role: S.clips[c] for role, c in roles.items()}
    args = dict(GREEDY, text=text, shift=shift, style_shift=style_shift,
                **{k + "_text": v for k, v in texts.items()})
    if use_prosody is not None:
        args["prosody_code"] = int(use_prosody)
    if target_duration:
        args["target_duration"] = target_duration
    if reference_duration:
        args["reference_duration"] = reference_duration
    first = drive(speak, S.pkg, name, route, clips, args)
    # the reference's tokens of the references, then its AR from the C prompt ids
    pen = ref.ar.gen.get("repetition_penalty", 1.0)
    gen = {"penalty": pen, "min_new": 15, "temperature": 0, "top_k": 25, "top_p": 0.8, "max_new": MAX_NEW}
    refs = {k: clips.get(k) for k in ("source", "voice", "style", "prosody")}
    if reference_duration:
        # upstream trims the timbre clip before anything reads it
        timbre = speak_ref.references(route, **refs, texts=texts)[0]
        refs["timbre"] = timbre[:int(reference_duration * RATE)]
    c_prompt_ids = read(first, "prompt_ids")
    got = ref.speak(route, text, texts, **refs, use_prosody=use_prosody, shift=shift, style_shift=style_shift,
                    target_duration=target_duration, gen=gen, prompt_ids=c_prompt_ids)
    same = True
    if "prosody" in got:
        gaps = np.concatenate([got["style_prosody"]["gaps"] if "style_prosody" in got else [], got["prosody"]["gaps"]])
        same &= route_common.ids_match(check, f"{name} prosody ids", read(first, "prosody_ids"), got["prosody_ids"],
                                       gaps)
    else:
        assert read(first, "prosody_ids") is None, f"{name}: prosody ids without the prosody code"
    if "style" in got:
        same &= route_common.ids_match(check, f"{name} style ids", read(first, "style_ids"), got["style"]["ids"],
                                       got["style"]["gaps"])
    else:
        assert read(first, "style_ids") is None, f"{name}: style ids without a style reference"
    same &= route_common.ids_match(check, f"{name} timbre ids", read(first, "timbre_ids"), got["timbre"]["ids"],
                                   got["timbre"]["gaps"])
    # the prompt as §4.6 builds it from the C tokens, and Hugging Face's ids of it
    with open(os.path.join(first, "prompt"), encoding="utf-8") as f:
        c_prompt = f.read()
    use_p = "prosody" in got
    want = ar_ref.prompt_text(use_p, got["style_text"], text, read(first, "prosody_ids") if use_p else [],
                              read(first, "style_ids") if "style" in got else [])
    assert c_prompt == want, f"{name}: the prompt differs:\n{c_prompt[:300]!r}\n{want[:300]!r}"
    if same:
        assert c_prompt == got["prompt"], f"{name}: the prompt differs from the reference's"
    if S.oracle:
        hf = ar_ref.oracle(os.path.join(ref.ar_dir, "tokenizer.json"), [c_prompt])["ids"][0]
        assert list(c_prompt_ids) == hf, \
            f"{name}: prompt ids differ from Hugging Face's ({len(c_prompt_ids)} vs {len(hf)})"
    c_gen = read(first, "generated_ids")
    assert list(c_gen) == list(got["generated_ids"]), \
        (f"{name}: AR continuation differs (C {list(c_gen[:10])}, ref {list(got['generated_ids'][:10])}; "
         f"smallest margin {min(got['margins']):.2e})")
    # the logits along the continuation: each generated id's log-softmax, from one teacher-forced pass
    seq = [int(i) for i in c_prompt_ids] + [int(i) for i in c_gen]
    with torch.no_grad():
        lp = torch.log_softmax(ref.ar.forward(seq)[len(c_prompt_ids) - 1:-1].double(), -1)
    want_lp = lp[torch.arange(len(c_gen)), torch.tensor([int(i) for i in c_gen])].numpy()
    e = float(np.max(np.abs(read(first, "logprobs", "<f4") - want_lp)))
    assert e < TOL_LOGPROB, f"{name}: log-probabilities of the continuation differ by {e:.2e}"
    c_ids = read(first, "ids")
    assert list(c_ids) == list(ar_ref.parse_content_style(ref.decode(list(c_gen)))), \
        f"{name}: parsed ids differ from the continuation's tags"
    print(f"{name}: prompt {len(c_prompt_ids)} ids, {len(c_gen)} generated, {len(c_ids)} content-style ids, "
          f"smallest greedy margin {min(got['margins']):.2e}, log-probabilities within {e:.1e}")
    if not same:
        return got
    # the audio from injected noise
    timbre = got["timbre_clip"]
    F = ref.frames_for(len(timbre), len(c_ids))
    noise = np.random.default_rng(5).standard_normal((F, ref.pre["num_mels"])).astype(np.float32)
    second = drive(speak, S.pkg, name, route, clips, args, noise)
    full = ref.speak(route, text, texts, **refs, use_prosody=use_prosody, shift=shift, style_shift=style_shift,
                     target_duration=target_duration, gen=gen, prompt_ids=c_prompt_ids, noise=noise, steps=STEPS)
    wav = read(second, "wav.f32", "<f4")
    e = rel(wav, full["wav"])
    print(f"{name}: audio {len(wav)} samples ({F} frames), max rel diff {e:.2e} (tolerance {TOL_WAV})")
    assert len(wav) == F * 480 and e < TOL_WAV, f"{name}: audio differs: {e:.3e}, {len(wav)} vs {F * 480} samples"
    return dict(got, wav=wav, noise_file=os.path.join(second, "noise.f32"))


CASES = [  # name, route, the clip of each reference, text, transcripts, options
    ("tts", "zero_shot_tts", {"voice": "voice"}, "Good morning to you.", VT, {}),
    ("tts_plain", "zero_shot_tts", {"voice": "voice"}, "Hello.", {}, {}),
    ("tts_trimmed", "zero_shot_tts", {"voice": "voice"}, "Hello.", {}, {"reference_duration": 2.0}),
    ("tts_style", "zero_shot_tts", {"voice": "voice", "style": "style"}, "Good morning.", dict(VT, **SV), {}),
    ("singing_melody", "text_to_singing", {"voice": "voice", "prosody": "hum"}, "La la la la.", VT,
     {"use_prosody": True}),
    ("svs", "svs", {"voice": "voice"}, "Twinkle twinkle little star.", VT, {}),
    ("style_converted_vc", "style_converted_vc", {"source": "source", "voice": "voice", "style": "style"}, SRC_TEXT,
     SV, {}),
    ("style_converted_svc", "style_converted_svc", {"source": "source", "voice": "voice"}, SRC_TEXT, SS, {"shift": 2}),
    ("editing", "editing", {"source": "source", "voice": "voice"}, "We will meet at the harbour at ten.", SS, {}),
    ("singing_style", "singing_style_conversion", {"source": "source", "style": "style"}, SRC_TEXT, SV,
     {"shift": 2, "style_shift": -1}),
    ("humming", "humming_to_singing", {"prosody": "hum", "voice": "voice"}, "Sing with me.", VT, {"shift": 3}),
    ("instrument", "instrument_to_singing", {"source": "hum", "voice": "voice"}, "Sing with me.", {},
     {"shift": -2, "target_duration": 3.1}),
]


@pytest.fixture(scope="module")
def spoken(speak, S):
    """The result of a case of CASES by name, run once."""
    cases = {c[0]: c for c in CASES}

    @functools.cache
    def get(name):
        _, route, roles, text, texts, kw = cases[name]
        return speak_case(speak, S, name, route, roles, text, texts, **kw)
    return get


@pytest.mark.parametrize("name", [c[0] for c in CASES])
def test_route(name, spoken):
    """Ids up to near-ties, the prompt (and its Hugging Face ids), the greedy continuation and its
    log-probabilities, the parsed ids and the audio from injected noise, against path A."""
    spoken(name)


CLI = [  # id, the case whose audio it must give, the audioc arguments (of S), stdin, speed
    ("tts_words", "tts", lambda S: ["tts", "--voice", S.wavs["voice"], "--voice-text", VOICE_TEXT, "Good", "morning",
                                    "to you."], None, 1.0),
    ("tts_stdin", "tts", lambda S: ["tts", "--voice", S.wavs["voice"], "--voice-text", VOICE_TEXT],
     "Good morning to you.", 1.0),
    ("tts_speed_0.5", "tts", lambda S: ["tts", "--voice", S.wavs["voice"], "--voice-text", VOICE_TEXT,
                                        "Good morning to you."], None, 0.5),
    ("tts_speed_2", "tts", lambda S: ["tts", "--voice", S.wavs["voice"], "--voice-text", VOICE_TEXT,
                                      "Good morning to you."], None, 2.0),
    ("editing", "editing", lambda S: ["vc", S.wavs["source"], "--route", "editing", "-r", S.wavs["voice"],
                                      "--source-text", SRC_TEXT, "--text", "We will meet at the harbour at ten."],
     None, 1.0),
    ("style_converted_svc", "style_converted_svc",
     lambda S: ["svc", "--route", "style_converted_svc", S.wavs["source"], "--target-voice", S.wavs["voice"],
                "--pitch-shift", 2, "--text", SRC_TEXT, "--source-text", SRC_TEXT], None, 1.0),
]


@pytest.mark.parametrize("case,args,stdin,speed", [c[1:] for c in CLI], ids=[c[0] for c in CLI])
def test_cli(case, args, stdin, speed, S, spoken, audioc):
    """audioc (greedy, the same noise) gives the driver's audio for the same request; with --speed,
    that audio time-stretched by the librosa reference (tests/ref/vevo2/pitch_ref.py)."""
    base = spoken(case)
    if "wav" not in base:
        pytest.skip(f"{case}: ids resolved differently at a near-tie, no audio to compare")
    args = args(S)
    out = os.path.join(WORK, "cli.wav")
    r = run(audioc, *args, "-m", S.pkg, "--temperature", 0, "--max-tokens", MAX_NEW, "--steps", STEPS,
            "--fm-noise", base["noise_file"], "--float", "-o", out, "--no-progress", "--speed", speed, input=stdin)
    assert r.returncode == 0, f"audioc {args[0]}: {r.stderr.strip()[-400:]}"
    want, tol = (base["wav"], 1e-6) if speed == 1.0 else (pitch_ref.time_stretch(base["wav"], speed), TOL_STRETCH)
    e = rel(wavfile.read(out)[1], want)
    assert e < tol, f"audioc {' '.join(map(str, args[:3]))}... --speed {speed}: differs from the driver by {e:.2e}"


def test_api(S, speak):
    """The C API on a voice file and on its samples."""
    r = run(speak, "api", S.pkg, S.wavs["voice"], raw(os.path.join(WORK, "voice.f32"), S.clips["voice"]))
    assert r.returncode == 0 and "api ok" in r.stdout, f"the C API: {r.stderr.strip()[-400:]}"


def short_wav():
    path = os.path.join(WORK, "short.wav")
    wavfile.write(path, RATE, (0.3 * np.sin(np.arange(1200) * 0.05)).astype(np.float32))
    return path


BAD = [  # what, the message names, the arguments (of the voice files), stdin
    ("empty text", "text is empty", lambda w: ["tts", "--voice", w["voice"], ""], None),
    ("empty text on stdin", "text is empty", lambda w: ["tts", "--voice", w["voice"]], ""),
    ("only punctuation", "no letter or digit", lambda w: ["tts", "--voice", w["voice"], "... !? --"], None),
    ("no text for a route that needs it", "no text",
     lambda w: ["vc", "--route", "editing", "--voice", w["voice"], w["source"]], None),
    ("a route without the reference it needs", "prosody reference",
     lambda w: ["tts", "--route", "humming_to_singing", "--voice", w["voice"], "la la"], None),
    ("no target voice", "target voice", lambda w: ["tts", "hello"], None),
    ("an unknown route", "unknown route", lambda w: ["tts", "--route", "karaoke", "--voice", w["voice"], "hello"], None),
    ("a voice file that is not there", "missing.wav",
     lambda w: ["tts", "--voice", os.path.join(WORK, "missing.wav"), "hello"], None),
    ("a prosody reference shorter than one token", "too short",
     lambda w: ["tts", "--route", "text_to_singing", "--prosody-code", "--prosody-ref", short_wav(), "--voice",
                w["voice"], "la la"], None),
    ("a style reference that is not audio", "not_audio",
     lambda w: ["tts", "--voice", w["voice"], "--style-ref", os.path.join(WORK, "not_audio.txt"), "hello"], None),
    ("a bad sampling value", "--top-p", lambda w: ["tts", "--voice", w["voice"], "--top-p", "2", "hello"], None),
]


@pytest.mark.parametrize("what,needle,args,stdin", BAD, ids=[b[0] for b in BAD])
def test_bad_input(what, needle, args, stdin, S, audioc):
    """Bad input is refused with a clear message naming the problem."""
    r = run(audioc, *args(S.wavs), "-m", S.pkg, "-o", os.path.join(WORK, "bad.wav"), "--steps", 2, "--max-tokens", 20,
            input=stdin)
    assert r.returncode in (1, 2) and needle in r.stderr and "Sanitizer" not in r.stderr \
        and "runtime error" not in r.stderr, f"{what}: exit {r.returncode}, stderr: {r.stderr.strip()[:300]}"


def test_estimated_shifts(S, speak):
    """Shift steps estimated against the timbre (spec §4.4), prosody and style: the numpy YIN medians' semitones."""
    args = dict(GREEDY, text="la la la", shift="est", style_shift="est")
    out = os.path.join(WORK, "est")
    os.makedirs(out, exist_ok=True)
    kv = [f"{k}={raw(os.path.join(out, k + '.f32'), S.clips[k])}" for k in ("source", "voice", "style")]
    r = run(speak, S.pkg, "singing_style_conversion", out, *kv, *[f"{k}={v}" for k, v in args.items()])
    want = (expected_shift(S.clips["source"], S.clips["voice"]), expected_shift(S.clips["style"], S.clips["voice"]))
    assert r.returncode == 0 and f"shift {want[0]} style_shift {want[1]} " in r.stdout, \
        f"estimated shifts: {r.stdout.strip()} {r.stderr.strip()[-300:]}, numpy YIN {want}"


def test_chunks(S, speak):
    """Long text: one prompt and one piece of audio per chunk, joined."""
    words = "One two three four. Five six, seven eight nine ten! Eleven twelve thirteen."
    out = drive(speak, S.pkg, "chunks", "zero_shot_tts", {"voice": S.clips["voice"]},
                dict(GREEDY, text=words, voice_text="Hello", chunk_units=4))
    n = 1
    while os.path.exists(os.path.join(out, f"prompt.{n}")):
        n += 1
    texts = []
    for k in range(n):
        with open(os.path.join(out, "prompt" + (f".{k}" if k else "")), encoding="utf-8") as f:
            p = f.read()
        texts.append(p.split("<|im_start|>user\nHello ", 1)[1].split("<|im_end|>", 1)[0])
    assert n == 4 and " ".join(texts) == words, f"chunks: {n} {texts}"


def test_threads(S, speak):
    """A seeded, sampled request: the same audio on 1 and 2 threads."""
    args = {"text": "Good morning", "voice_text": "Hello there", "max_tokens": MAX_NEW, "steps": STEPS, "seed": 9}
    wavs = []
    for t in (1, 2):
        out = drive(speak, S.pkg, f"threads{t}", "zero_shot_tts", {"voice": S.clips["voice"]}, dict(args, threads=t))
        wavs.append(read(out, "wav.f32", "<f4"))
    assert wavs[0] is not None and wavs[1] is not None and rel(wavs[0], wavs[1]) < 1e-5, \
        "seeded sampling: 1 and 2 threads differ"
