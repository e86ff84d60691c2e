#!/usr/bin/python3
"""Generate deterministic test speech with espeak-ng and sox.

usage: make_speech.py OUTDIR

Writes ~10 clips of 3-10 s (phrases separated by 0.3-1.5 s of silence, with
leading and trailing silence; several voices; 8000/16000/44100 Hz; mono and
stereo; 16-bit PCM) and OUTDIR/manifest.json describing each file, including
the approximate speech spans in seconds.
"""
import json
import os
import subprocess
import sys
import tempfile
import wave

TEXT = {
    "en": ["The quick brown fox jumps over the lazy dog.",
           "Please call Stella and ask her to bring these things.",
           "We will meet at the station at nine."],
    "da": ["Hvad hedder du, og hvor kommer du fra?",
           "Det regner i København i dag.",
           "Jeg vil gerne have en kop kaffe."],
    "de": ["Guten Morgen, wie geht es Ihnen heute?",
           "Der Zug fährt um acht Uhr ab.",
           "Das Wetter ist heute sehr schön."],
    "fr": ["Bonjour, comment allez-vous aujourd'hui?",
           "Le train part à huit heures.",
           "Il fait très beau ce matin."],
}

# name, voice, language, gaps between phrases (s), lead (s), trail (s),
# output rate, stereo mode (None | "gain" | "delay"), gain (dB).
CLIPS = [
    ("en_us_16k_mono", "en-us", "en", [0.5, 1.0], 0.5, 0.8, 16000, None, -3),
    ("en_f3_16k_mono", "en+f3", "en", [0.3, 1.5], 0.6, 0.3, 16000, None, -12),
    ("da_16k_mono", "da", "da", [0.7, 0.4], 0.3, 1.0, 16000, None, -3),
    ("de_m3_16k_mono", "de+m3", "de", [1.2, 0.6], 0.6, 0.6, 16000, None, -6),
    ("fr_16k_mono", "fr", "fr", [0.4], 0.8, 1.5, 16000, None, -3),
    ("en_8k_mono", "en", "en", [0.8, 0.3], 0.4, 0.7, 8000, None, -3),
    ("da_m3_8k_stereo_gain", "da+m3", "da", [1.0], 0.5, 0.5, 8000, "gain", -3),
    ("en_us_44k_mono", "en-us", "en", [0.6, 1.2], 0.7, 0.3, 44100, None, -3),
    ("de_44k_stereo_delay", "de", "de", [0.3, 0.9], 0.5, 1.2, 44100, "delay", -3),
    ("fr_f2_16k_stereo_gain", "fr+f2", "fr", [1.5], 1.0, 1.0, 16000, "gain", -3),
    ("da_f3_16k_stereo_delay", "da+f3", "da", [0.5, 0.8], 0.4, 0.6, 16000, "delay", -6),
]

SYNTH_RATE = 22050  # espeak-ng's output rate
# Second-channel treatments: a quieter copy, or a copy 3 ms late.
STEREO = {"gain": ["remix", "1", "1v0.5"], "delay": ["remix", "1", "1", "delay", "0", "0.003"]}


def run(cmd):
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def frames(path):
    with wave.open(path) as w:
        return w.getnframes()


def phrase(tmp, voice, text, idx):
    """Synthesise one phrase with espeak-ng's own lead/tail silence trimmed."""
    raw = os.path.join(tmp, f"raw{idx}.wav")
    out = os.path.join(tmp, f"phrase{idx}.wav")
    run(["espeak-ng", "-v", voice, "-w", raw, text])
    trim = ["silence", "1", "0.005", "0.1%"]
    run(["sox", "-D", raw, out] + trim + ["reverse"] + trim + ["reverse"])
    return out


def make_clip(tmp, outdir, spec):
    name, voice, lang, gaps, lead, trail, rate, stereo, gain = spec
    texts = TEXT[lang][:len(gaps) + 1]
    parts, spans, t = [], [], lead
    for i, text in enumerate(texts):
        p = phrase(tmp, voice, text, i)
        dur = frames(p) / SYNTH_RATE
        spans.append([round(t, 3), round(t + dur, 3)])
        gap = gaps[i] if i < len(gaps) else 0.0
        padded = os.path.join(tmp, f"padded{i}.wav")
        run(["sox", "-D", p, padded, "pad", "0", str(gap)])
        parts.append(padded)
        t += dur + gap
    out = os.path.join(outdir, name + ".wav")
    # -D: no dither, so the output is bit-identical on every run.
    effects = ["pad", str(lead), str(trail), "gain", str(gain), "rate", str(rate)]
    run(["sox", "-D"] + parts + ["-b", "16", "-e", "signed-integer", out]
        + effects + STEREO.get(stereo, []))
    with wave.open(out) as w:
        info = {"file": name + ".wav", "rate": w.getframerate(), "channels": w.getnchannels(),
                "n_frames": w.getnframes(), "voice": voice, "text": texts,
                "speech_s": spans, "stereo": stereo, "gain_db": gain}
    assert info["rate"] == rate and info["channels"] == (2 if stereo else 1), info
    return info


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.strip())
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    clips = []
    with tempfile.TemporaryDirectory() as tmp:
        for spec in CLIPS:
            try:
                clips.append(make_clip(tmp, outdir, spec))
            except subprocess.CalledProcessError as e:
                sys.exit(f"make_speech: {spec[0]}: {' '.join(e.cmd)} failed: "
                         f"{e.stderr.decode(errors='replace').strip()}")
    with open(os.path.join(outdir, "manifest.json"), "w") as f:
        json.dump({"clips": clips}, f, indent=1, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main()
