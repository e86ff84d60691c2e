#!/usr/bin/python3
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
Environment: AUDIOC, VEVO2_SPEAK, TEST_WORK.
"""
import os
import shutil
import sys

import numpy as np
import torch
from scipy.io import wavfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "vevo2"))
import ar_ref  # noqa: E402
import f0_ref  # noqa: E402
import make_package  # noqa: E402
import pitch_ref  # noqa: E402
import route_common  # noqa: E402
import speak_ref  # noqa: E402
from checker import Checker  # noqa: E402
from route_common import AUDIOC, RATE, TOL_WAV, load24, raw, rel, run  # noqa: E402

DRIVER = os.environ["VEVO2_SPEAK"]
WORK = os.path.join(os.environ["TEST_WORK"], "vevo2_speak")
STEPS = 8
MAX_NEW = 30
TOL_LOGPROB = 1e-4   # the AR's logits, as the Qwen2 parity test holds them
TOL_STRETCH = 1e-2   # librosa's float32 phase accumulator (test_vevo2_pitch: the same tolerance)
check = Checker()


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


def drive(name, route, clips, args, noise=None):
    """The driver on CLIPS ({key: samples}) and ARGS; its output folder, or None."""
    out = os.path.join(WORK, name + ("_noise" if noise is not None else ""))
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    kv = [f"{k}={raw(os.path.join(out, k + '.f32'), x)}" for k, x in clips.items()]
    kv += [f"{k}={v}" for k, v in args.items()]
    if noise is not None:
        kv.append("noise=" + raw(os.path.join(out, "noise.f32"), noise))
    r = run(DRIVER, PKG, route, out, *kv)
    if not check(r.returncode == 0, f"{name}: driver failed: {r.stderr.strip()[-400:]}"):
        return None
    return out


GREEDY = {"temperature": 0, "max_tokens": MAX_NEW, "steps": STEPS}


def case(ref, name, route, clips, text, texts, use_prosody=None, shift=0, style_shift=0,
         target_duration=None, reference_duration=None, oracle=True):
    """One route against the reference, every stage; TEXTS the transcripts {style, voice, source}."""
    args = dict(GREEDY, text=text, shift=shift, style_shift=style_shift,
                **{k + "_text": v for k, v in texts.items()})
    if use_prosody is not None:
        args["prosody_code"] = int(use_prosody)
    if target_duration:
        args["target_duration"] = target_duration
    if reference_duration:
        args["reference_duration"] = reference_duration
    first = drive(name, route, clips, args)
    if not first:
        return None
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
        same &= route_common.ids_match(check, f"{name} prosody ids", read(first, "prosody_ids"), got["prosody_ids"], gaps)
    else:
        check(read(first, "prosody_ids") is None, f"{name}: prosody ids without the prosody code")
    if "style" in got:
        same &= route_common.ids_match(check, f"{name} style ids", read(first, "style_ids"), got["style"]["ids"],
                                     got["style"]["gaps"])
    else:
        check(read(first, "style_ids") is None, f"{name}: style ids without a style reference")
    same &= route_common.ids_match(check, f"{name} timbre ids", read(first, "timbre_ids"), got["timbre"]["ids"],
                                 got["timbre"]["gaps"])
    # the prompt as §4.6 builds it from the C tokens, and Hugging Face's ids of it
    c_prompt = open(os.path.join(first, "prompt"), encoding="utf-8").read()
    use_p = "prosody" in got
    want = ar_ref.prompt_text(use_p, got["style_text"], text, read(first, "prosody_ids") if use_p else [],
                              read(first, "style_ids") if "style" in got else [])
    check(c_prompt == want, f"{name}: the prompt differs:\n{c_prompt[:300]!r}\n{want[:300]!r}")
    if same:
        check(c_prompt == got["prompt"], f"{name}: the prompt differs from the reference's")
    if oracle:
        hf = ar_ref.oracle(os.path.join(ref.ar_dir, "tokenizer.json"), [c_prompt])["ids"][0]
        check(list(c_prompt_ids) == hf, f"{name}: prompt ids differ from Hugging Face's ({len(c_prompt_ids)} vs "
              f"{len(hf)})")
    c_gen = read(first, "generated_ids")
    check(list(c_gen) == list(got["generated_ids"]),
          f"{name}: AR continuation differs (C {list(c_gen[:10])}, ref {list(got['generated_ids'][:10])}; "
          f"smallest margin {min(got['margins']):.2e})")
    # the logits along the continuation: each generated id's log-softmax, from one teacher-forced pass
    if list(c_gen) == list(got["generated_ids"]):
        seq = [int(i) for i in c_prompt_ids] + [int(i) for i in c_gen]
        with torch.no_grad():
            lp = torch.log_softmax(ref.ar.forward(seq)[len(c_prompt_ids) - 1:-1].double(), -1)
        want_lp = lp[torch.arange(len(c_gen)), torch.tensor([int(i) for i in c_gen])].numpy()
        e = float(np.max(np.abs(read(first, "logprobs", "<f4") - want_lp)))
        check(e < TOL_LOGPROB, f"{name}: log-probabilities of the continuation differ by {e:.2e}")
        print(f"{name}: log-probabilities of the continuation within {e:.1e}")
    c_ids = read(first, "ids")
    check(list(c_ids) == list(ar_ref.parse_content_style(ref.decode(list(c_gen)))),
          f"{name}: parsed ids differ from the continuation's tags")
    print(f"{name}: prompt {len(c_prompt_ids)} ids, {len(c_gen)} generated, {len(c_ids)} content-style ids, "
          f"smallest greedy margin {min(got['margins']):.2e}")
    if not same:
        return got
    # the audio from injected noise
    timbre = got["timbre_clip"]
    F = ref.frames_for(len(timbre), len(c_ids))
    noise = np.random.default_rng(5).standard_normal((F, ref.pre["num_mels"])).astype(np.float32)
    second = drive(name, route, clips, args, noise)
    if not second:
        return got
    full = ref.speak(route, text, texts, **refs, use_prosody=use_prosody, shift=shift, style_shift=style_shift,
                     target_duration=target_duration, gen=gen, prompt_ids=c_prompt_ids, noise=noise, steps=STEPS)
    wav = read(second, "wav.f32", "<f4")
    e = rel(wav, full["wav"])
    print(f"{name}: audio {len(wav)} samples ({F} frames), max rel diff {e:.2e} (tolerance {TOL_WAV})")
    check(len(wav) == F * 480 and e < TOL_WAV, f"{name}: audio differs: {e:.3e}, {len(wav)} vs {F * 480} samples")
    return dict(got, wav=wav, noise_file=os.path.join(second, "noise.f32"))


def cli(base, *args, stdin=None, speed=1.0):
    """audioc ARGS (a tts, vc or svc command) against the driver's audio BASE (greedy, the same noise);
    with SPEED, against BASE time-stretched by the librosa reference (tests/ref/vevo2/pitch_ref.py)."""
    out = os.path.join(WORK, "cli.wav")
    r = run(AUDIOC, *args, "-m", PKG, "--temperature", 0, "--max-tokens", MAX_NEW, "--steps", STEPS,
            "--fm-noise", base["noise_file"], "--float", "-o", out, "--no-progress", "--speed", speed, input=stdin)
    if check(r.returncode == 0, f"audioc {args[0]}: {r.stderr.strip()[-400:]}"):
        want, tol = (base["wav"], 1e-6) if speed == 1.0 else (pitch_ref.time_stretch(base["wav"], speed), TOL_STRETCH)
        e = rel(wavfile.read(out)[1], want)
        check(e < tol, f"audioc {' '.join(map(str, args[:3]))}... --speed {speed}: differs from the driver by {e:.2e}")


def bad_inputs(wavs):
    out = os.path.join(WORK, "bad.wav")

    def expect(what, needle, *args, stdin=None):
        r = run(AUDIOC, *args, "-m", PKG, "-o", out, "--steps", 2, "--max-tokens", 20, input=stdin)
        check(r.returncode in (1, 2) and needle in r.stderr and "Sanitizer" not in r.stderr
              and "runtime error" not in r.stderr, f"{what}: exit {r.returncode}, stderr: {r.stderr.strip()[:300]}")

    short = os.path.join(WORK, "short.wav")
    wavfile.write(short, RATE, (0.3 * np.sin(np.arange(1200) * 0.05)).astype(np.float32))
    v = wavs["voice"]
    expect("empty text", "no word", "tts", "--voice", v, "")
    expect("empty text on stdin", "no word", "tts", "--voice", v, stdin="")
    expect("only punctuation", "no word", "tts", "--voice", v, "... !? --")
    expect("no text for a route that needs it", "no text", "vc", "--route", "editing", "--voice", v, wavs["source"])
    expect("a route without the reference it needs", "prosody reference", "tts", "--route", "humming_to_singing",
           "--voice", v, "la la")
    expect("no target voice", "target voice", "tts", "hello")
    expect("an unknown route", "unknown route", "tts", "--route", "karaoke", "--voice", v, "hello")
    expect("a voice file that is not there", "missing.wav", "tts", "--voice", os.path.join(WORK, "missing.wav"),
           "hello")
    expect("a prosody reference shorter than one token", "too short", "tts", "--route", "text_to_singing",
           "--prosody-code", "--prosody-ref", short, "--voice", v, "la la")
    expect("a style reference that is not audio", "not_audio", "tts", "--voice", v, "--style-ref",
           os.path.join(WORK, "not_audio.txt"), "hello")
    expect("a bad sampling value", "--top-p", "tts", "--voice", v, "--top-p", "2", "hello")


def estimated_shifts(clips):
    """Shift steps estimated against the timbre (spec §4.4): prosody and style."""
    args = dict(GREEDY, text="la la la", shift="est", style_shift="est")
    out = os.path.join(WORK, "est")
    os.makedirs(out, exist_ok=True)
    kv = [f"{k}={raw(os.path.join(out, k + '.f32'), clips[k])}" for k in ("source", "voice", "style")]
    r = run(DRIVER, PKG, "singing_style_conversion", out, *kv, *[f"{k}={v}" for k, v in args.items()])
    want = (expected_shift(clips["source"], clips["voice"]), expected_shift(clips["style"], clips["voice"]))
    check(r.returncode == 0 and f"shift {want[0]} style_shift {want[1]} " in r.stdout,
          f"estimated shifts: {r.stdout.strip()} {r.stderr.strip()[-300:]}, numpy YIN {want}")
    print(f"estimated shifts {want}: {r.stdout.strip()}")


def chunks(clips):
    """Long text: one prompt and one piece of audio per chunk, joined."""
    words = "One two three four. Five six, seven eight nine ten! Eleven twelve thirteen."
    out = drive("chunks", "zero_shot_tts", {"voice": clips["voice"]},
                dict(GREEDY, text=words, voice_text="Hello", chunk_units=4))
    if not out:
        return
    n = 1
    while os.path.exists(os.path.join(out, f"prompt.{n}")):
        n += 1
    texts = []
    for k in range(n):
        p = open(os.path.join(out, "prompt" + (f".{k}" if k else "")), encoding="utf-8").read()
        texts.append(p.split("<|im_start|>user\nHello ", 1)[1].split("<|im_end|>", 1)[0])
    check(n == 4 and " ".join(texts) == words, f"chunks: {n} {texts}")
    print(f"chunks: {texts}")


def threads(clips):
    """A seeded, sampled request: the same audio on 1 and 2 threads."""
    args = {"text": "Good morning", "voice_text": "Hello there", "max_tokens": MAX_NEW, "steps": STEPS, "seed": 9}
    wavs = []
    for t in (1, 2):
        out = drive(f"threads{t}", "zero_shot_tts", {"voice": clips["voice"]}, dict(args, threads=t))
        wavs.append(read(out, "wav.f32", "<f4") if out else None)
    check(wavs[0] is not None and wavs[1] is not None and rel(wavs[0], wavs[1]) < 1e-5,
          "seeded sampling: 1 and 2 threads differ")


def main():
    global PKG
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    r = run(DRIVER, "parse")
    check(r.returncode == 0 and "parse ok" in r.stdout, f"the prompt and the parser: {r.stderr.strip()[-400:]}")
    PKG = make_package.make(os.path.join(WORK, "pkg"), "F32", seed=21)
    ref = speak_ref.Speaker(PKG)
    voice_text = "Please call Stella and ask her to bring these things."
    src_text = "We will meet at the station at nine."
    style_text = "I can not believe you did that again!"
    wavs = {"voice": speech("voice", voice_text, "en+f3", 75, RATE, 3.3),
            "source": speech("source", src_text, "en", 40, RATE),
            "style": speech("style", style_text, "en+m3", 60, RATE)}
    clips = {k: load24(w) for k, w in wavs.items()}
    clips["hum"] = hum()
    open(os.path.join(WORK, "not_audio.txt"), "w").write("not audio at all\n" * 50)
    oracle = ar_ref.oracle_available()
    if not oracle:
        print("SKIP prompt ids against Hugging Face: tests/node has no @anush008/tokenizers (scripts/setup.sh)")
    v, s, st, h = clips["voice"], clips["source"], clips["style"], clips["hum"]
    vt, sv, ss = {"voice": voice_text}, {"style": style_text}, {"source": src_text}
    cases = [
        ("tts", "zero_shot_tts", {"voice": v}, "Good morning to you.", vt, {}),
        ("tts_plain", "zero_shot_tts", {"voice": v}, "Hello.", {}, {}),
        ("tts_trimmed", "zero_shot_tts", {"voice": v}, "Hello.", {}, {"reference_duration": 2.0}),
        ("tts_style", "zero_shot_tts", {"voice": v, "style": st}, "Good morning.", dict(vt, **sv), {}),
        ("singing_melody", "text_to_singing", {"voice": v, "prosody": h}, "La la la la.", vt, {"use_prosody": True}),
        ("svs", "svs", {"voice": v}, "Twinkle twinkle little star.", vt, {}),
        ("style_converted_vc", "style_converted_vc", {"source": s, "voice": v, "style": st}, src_text, sv, {}),
        ("style_converted_svc", "style_converted_svc", {"source": s, "voice": v}, src_text, ss, {"shift": 2}),
        ("editing", "editing", {"source": s, "voice": v}, "We will meet at the harbour at ten.", ss, {}),
        ("singing_style", "singing_style_conversion", {"source": s, "style": st}, src_text, sv,
         {"shift": 2, "style_shift": -1}),
        ("humming", "humming_to_singing", {"prosody": h, "voice": v}, "Sing with me.", vt, {"shift": 3}),
        ("instrument", "instrument_to_singing", {"source": h, "voice": v}, "Sing with me.", {},
         {"shift": -2, "target_duration": 3.1}),
    ]
    got = {name: case(ref, name, route, cl, text, texts, oracle=oracle, **kw)
           for name, route, cl, text, texts, kw in cases}
    # the CLI: the driver's audio for the same requests
    if got["tts"] and "wav" in got["tts"]:
        cli(got["tts"], "tts", "--voice", wavs["voice"], "--voice-text", voice_text, "Good", "morning", "to you.")
        cli(got["tts"], "tts", "--voice", wavs["voice"], "--voice-text", voice_text, stdin="Good morning to you.")
        for speed in (0.5, 2.0):
            cli(got["tts"], "tts", "--voice", wavs["voice"], "--voice-text", voice_text, "Good morning to you.",
                speed=speed)
    if got["editing"] and "wav" in got["editing"]:
        cli(got["editing"], "vc", wavs["source"], "--route", "editing", "-r", wavs["voice"], "--source-text",
            src_text, "--text", "We will meet at the harbour at ten.")
    if got["style_converted_svc"] and "wav" in got["style_converted_svc"]:
        cli(got["style_converted_svc"], "svc", "--route", "style_converted_svc", wavs["source"], "--target-voice",
            wavs["voice"], "--pitch-shift", 2, "--text", src_text, "--source-text", src_text)
    r = run(DRIVER, "api", PKG, wavs["voice"], raw(os.path.join(WORK, "voice.f32"), clips["voice"]))
    check(r.returncode == 0 and "api ok" in r.stdout, f"the C API: {r.stderr.strip()[-400:]}")
    bad_inputs(wavs)
    estimated_shifts({"source": s, "voice": v, "style": st})
    chunks(clips)
    threads(clips)
    return check.finish()


if __name__ == "__main__":
    sys.exit(main())
