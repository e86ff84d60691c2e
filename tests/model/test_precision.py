"""The accuracy of each weight type (--weights) against the f32 path, per
family, held at the level tests/precision.py measured: the same tables
docs/models/*.md quote. A change that makes a figure worse fails here.
After a change of the arithmetic (the kernels), re-measure with

    /usr/bin/python3 tests/precision.py

and update the figures below and in the docs together. Also: --weights
and --model-weights reach every command and the server, and a bad value
is a usage error that names it. About 30 s in all."""
import math
import subprocess

import pytest

import precision
import testenv
from testenv import AUDIOC, AUDIOC_SERVER, BUNDLED_MODEL

# ---- the held figures, one place per family ---------------------------------

# Silero VAD and MarbleNet VAD (real weights): the largest |p - p_f32|. Their
# tensors are all read as f32 (no product matrix is eligible), so the
# probabilities are the same bits at every type.
SILERO_MAX_DIFF = {"bf16": 0.0, "q8_0": 0.0}
MARBLENET_MAX_DIFF = {"bf16": 0.0, "q8_0": 0.0}

# Hviske, the tiny random checkpoint: at least this many of the 3 clips and
# of their 7 chunks have greedy ids equal to the f32 run's (a random model's
# choices lie close together: one chunk, a different one, parts at each type).
HVISKE_SAME = {"bf16": (2, 6), "q8_0": (2, 6)}
# The tiny checkpoint's Q8_0 GGUF (stored lower than asked, so dequantized)
# held as f32 or bf16: at least this many of the 3 clips with the ids of its
# stored (Q8_0) run (its int8 arithmetic against f32's, or bf16's).
HVISKE_GGUF_Q8_SAME = {"f32": 3, "bf16": 2}
# hviske-tiny-da on the 20 held-out clips: WER (%) within this of f32's.
HVISKE_WER_MARGIN = 0.5

# Vevo2, the tiny package, per route and type: the AR's ids equal to the
# f32 run's (all 30 of a greedy run; 0 for the conversion without AR), the
# flow matching's mel SNR and the audio's SNR in dB against f32 (at least
# the figure less SNR_MARGIN_DB).
VEVO2 = {
    "style_preserved_vc": {"bf16": (0, 46.3, 44.4), "q8_0": (0, 31.6, 30.4)},
    "zero_shot_tts": {"bf16": (30, 46.3, 44.4), "q8_0": (30, 37.1, 35.0)},
    "text_to_singing": {"bf16": (30, 46.3, 44.4), "q8_0": (30, 37.1, 35.0)},
    "style_converted_vc": {"bf16": (30, 46.5, 44.6), "q8_0": (30, 36.9, 34.6)},
}
SNR_MARGIN_DB = 1.0

# ---- the checks ---------------------------------------------------------------


@pytest.fixture(scope="module")
def vad_data():
    testenv.require(testenv.SILERO, testenv.MARBLE_DIR, precision.LIBRISPEECH)


@pytest.mark.parametrize("name, held", [("silero", SILERO_MAX_DIFF), ("marblenet", MARBLENET_MAX_DIFF)])
def test_vad(vad_data, name, held):
    got = precision.FAMILIES[name]()
    print(f"{name}: max |p - p_f32| {got}")
    for t, d in got.items():
        assert d <= held[t], f"{name} at {t}: max |p - p_f32| {d:.2e}, held at {held[t]:.2e}"


def test_hviske(tokenizer):
    testenv.require_tools("espeak-ng", "sox")
    got = precision.hviske()
    print(f"hviske tiny: (clips equal, clips, chunks equal, chunks) {got}")
    for t, (clips, _, chunks, _) in got.items():
        want = HVISKE_SAME[t]
        assert clips >= want[0] and chunks >= want[1], \
            f"hviske tiny at {t}: {clips} clips and {chunks} chunks with f32's ids, held at {want}"


def test_hviske_wer():
    testenv.require_tools("espeak-ng", "sox")
    got = precision.hviske_wer()
    print(f"hviske-tiny-da held-out WER % by type: {got}")
    for t in precision.TYPES:
        assert got[t] <= got["f32"] + HVISKE_WER_MARGIN, \
            f"hviske-tiny-da at {t}: WER {got[t]:.2f} %, f32 {got['f32']:.2f} % (+{HVISKE_WER_MARGIN})"


def test_vevo2(driver):
    testenv.require_tools("espeak-ng", "sox")
    driver("test_vevo2_speak")
    got = precision.vevo2()
    precision.table("vevo2", got)
    for route, by_type in got.items():
        for t, (same, n, mel, wav) in by_type.items():
            ar, mel_min, wav_min = VEVO2[route][t]
            assert math.isfinite(mel) and math.isfinite(wav), f"vevo2 {route} at {t}: the same bits as f32 (converted?)"
            assert same >= ar, f"vevo2 {route} at {t}: {same}/{n} AR ids equal to f32's, held at {ar}"
            assert mel >= mel_min - SNR_MARGIN_DB, f"vevo2 {route} at {t}: mel SNR {mel:.1f} dB, held at {mel_min}"
            assert wav >= wav_min - SNR_MARGIN_DB, f"vevo2 {route} at {t}: wav SNR {wav:.1f} dB, held at {wav_min}"


def test_lower_stored(tokenizer):
    """A Q8_0 GGUF package asked for f32 or bf16 is dequantized: it hears what its stored run hears."""
    testenv.require_tools("espeak-ng", "sox")
    got = precision.hviske_gguf_q8()
    print(f"q8_0 GGUF held as f32 / bf16: (clips with the stored run's ids, clips) {got}")
    for t, want in HVISKE_GGUF_Q8_SAME.items():
        assert got[t][0] >= want, f"q8_0 GGUF held as {t}: {got[t][0]} clips with the stored run's ids, held at {want}"


# ---- the option in every front end -------------------------------------------

COMMANDS = [["transcribe"], ["vad"], ["tts", "--voice", "x.wav", "hi"], ["vc", "--target-voice", "x.wav", "y.wav"],
            ["svc", "--target-voice", "x.wav", "y.wav"]]


@pytest.mark.parametrize("cmd", COMMANDS, ids=lambda c: c[0])
def test_cli_option(cmd):
    p = subprocess.run([AUDIOC, cmd[0], "--help"], capture_output=True, text=True)
    assert p.returncode == 0 and "--weights T" in p.stdout, f"audioc {cmd[0]} --help tells of --weights"
    p = subprocess.run([AUDIOC, *cmd, "--weights", "q4"], capture_output=True, text=True)
    assert p.returncode == 2 and "--weights" in p.stderr and "'q4'" in p.stderr, \
        f"audioc {cmd[0]} --weights q4: exit 2 naming the value ({p.returncode}: {p.stderr.strip()[-300:]})"


def test_server_option():
    for args, want in ((["--weights", "q4"], "'q4'"), (["--model-weights", "nope=q8_0"], "nope=q8_0"),
                       (["--model", f"da={BUNDLED_MODEL}", "--model-weights", "da=q4"], "'q4'")):
        p = subprocess.run([AUDIOC_SERVER, *args], capture_output=True, text=True, timeout=30)
        assert p.returncode == 2 and want in p.stderr, f"audioc-server {args}: exit 2 naming {want} ({p.stderr[-300:]})"
    srv = subprocess.Popen([AUDIOC_SERVER, "--port", "0", "--weights", "bf16", "--model", f"da={BUNDLED_MODEL}",
                            "--model", f"raw={BUNDLED_MODEL}", "--model-weights", "raw=stored"],
                           stderr=subprocess.PIPE, text=True)
    try:
        log = []
        for line in srv.stderr:   # each model's line, in order, before it listens
            log.append(line)
            if "model 'raw'" in line:
                break
        text = "".join(log)
        assert "model 'da': hviske_asr" in text and "weights bf16" in text, f"--weights reaches the models:\n{text}"
        assert any("model 'raw'" in x and "weights stored" in x for x in log), f"--model-weights overrides it:\n{text}"
    finally:
        srv.terminate()
        srv.wait(timeout=30)

