"""Parity of Vevo2's pitch pieces in src/audio with tests/ref/vevo2:

pitch shift (pitch_shift.c) against pitch_ref.py (librosa's
effects.pitch_shift written in numpy, libsoxr through ctypes for the
resampling): on espeak-ng speech at 24 kHz for several steps,
  - the STFT of the stretch (numpy float64 FFT -> complex64),
  - the phase vocoder on the same (C) STFT: the vocoder alone,
  - the ISTFT of the C vocoder output against the C stretched signal,
  - the whole time stretch from the signal (independent STFTs),
  - the resampling of the C stretched signal (the same libsoxr: exact),
  - the whole pitch shift;
F0 (f0.c) against f0_ref.py (the same YIN in numpy): the per-frame track,
the median at 24 kHz, espeak-ng speech at two pitches, a pure tone (within
0.5 %), silence (nothing voiced, shift 0), the shift rule on table cases,
and the difference from Praat's to_pitch_ac median (Debian's praat, when
installed) in semitones. And the bad inputs of the C functions.
"""
import functools
import os
import subprocess
import sys

import numpy as np
import pytest

import testenv

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "vevo2"))
import f0_ref  # noqa: E402
import pitch_ref  # noqa: E402

WORK = testenv.work("vevo2_pitch")
SR = 24000

# max |c - ref| / max |ref| per stage
TOL_STFT = 1e-5
TOL_PV = 1e-5        # the vocoder on the same STFT (measured ~1e-7)
TOL_ISTFT = 1e-5     # ISTFT of the same vocoder output
TOL_SOXR = 1e-6      # the same library on the same input (measured 0)
# The whole stretch and shift from the signal: the STFTs differ by ~1e-7
# (float FFT here, float64 numpy there) and librosa's float32 phase
# accumulator turns such differences into lasting phase steps of an ulp of
# the accumulated phase (~0.016 rad after 4 s), so the two agree to a few
# 1e-3 (measured up to 6e-3 at +24 steps); with a float64 accumulator the
# same two STFTs agree to ~1e-5. The float32 rounding itself moves librosa's
# result by ~1e-2 from exact arithmetic (printed as "f32 noise").
TOL_STRETCH = 1e-2
TOL_SHIFT = 1e-2
TOL_F0 = 1e-4        # relative, per voiced frame and median
STEPS = [-24, -12, -5, -1, 0, 2.5, 3, 7, 12, 24]
TEXT = "The quick brown fox jumps over the lazy dog. We will meet at nine."
F0_TEXT = "Please call Stella and ask her to bring these things with her."
SHIFT_TABLE = [(2 ** (14 / 12), 2), (2 ** (-14 / 12), -2), (2 ** (12 / 12), 12), (2 ** (-12 / 12), -12),
               (2 ** (13 / 12), 1), (2 ** (-13 / 12), -1), (2 ** (24 / 12), 0), (2 ** (-24 / 12), 0),
               (2 ** (25 / 12), 1), (2 ** (-25 / 12), -1), (2 ** (5.4 / 12), 5), (2 ** (-5.6 / 12), -6),
               (1.0, 0), (2 ** (36 / 12), 0), (2 ** (-31 / 12), -7)]


@pytest.fixture(scope="module")
def run(driver):
    """Runs test_vevo2_pitch with ARGS; its stdout, the run asserted to succeed."""
    program = driver("test_vevo2_pitch")

    def call(*args):
        p = subprocess.run([program, *map(str, args)], capture_output=True, text=True)
        assert p.returncode == 0, f"{' '.join(map(str, args))}: exit {p.returncode}: {p.stderr.strip()[:2000]}"
        return p.stdout
    return call


def rel(c, r):
    c, r = np.asarray(c), np.asarray(r)
    if c.shape != r.shape:
        return np.inf
    c, r = c.astype(np.result_type(c, np.float64)), r.astype(np.result_type(r, np.float64))
    return float(np.max(np.abs(c - r)) / max(np.max(np.abs(r)), 1e-30))


def speech(name, pitch, text, seconds=None):
    """espeak-ng speech at 24 kHz (float32), optionally repeated to SECONDS."""
    raw, wav = os.path.join(WORK, name + "_raw.wav"), os.path.join(WORK, name + ".raw")
    subprocess.run(["espeak-ng", "-v", "en", "-p", str(pitch), "-w", raw, text], check=True)
    subprocess.run(["sox", "-D", raw, "-t", "f32", "-r", str(SR), "-c", "1", wav, "gain", "-3"], check=True)
    x = np.fromfile(wav, dtype="<f4")
    if seconds:
        x = np.tile(x, int(np.ceil(seconds * SR / len(x))))[:int(seconds * SR)]
    return x


def save(name, x):
    path = os.path.join(WORK, name)
    np.asarray(x, dtype="<f4").tofile(path)
    return path


def load(path):
    return np.fromfile(path, dtype="<f4")


@pytest.fixture(scope="module")
def x():
    """The speech every pitch-shift case works on."""
    return speech("speech", 50, TEXT)


@pytest.mark.parametrize("steps", STEPS)
def test_pitch_shift(steps, x, run):
    """Every stage of the shift by STEPS semitones against pitch_ref at its tolerance."""
    src = save(f"speech_{steps}.f32", x)
    bins = pitch_ref.N_FFT // 2 + 1
    rate = 2.0 ** (-steps / 12)
    d = os.path.join(WORK, f"steps_{steps}")
    os.makedirs(d, exist_ok=True)
    run("stretch", src, repr(rate), d)
    c_stft = load(os.path.join(d, "stft.f32")).reshape(-1, bins, 2)
    c_stft = (c_stft[..., 0] + 1j * c_stft[..., 1]).T.astype(np.complex64)
    c_pv = load(os.path.join(d, "pv.f32")).reshape(-1, bins, 2)
    c_pv = (c_pv[..., 0] + 1j * c_pv[..., 1]).T.astype(np.complex64)
    c_stretch = load(os.path.join(d, "stretch.f32"))
    what = f"steps {steps}"
    out = os.path.join(d, "shift.f32")
    run("shift", src, SR, repr(float(steps)), out)
    c_shift = load(out)

    e_stft = rel(c_stft, pitch_ref.stft(x))
    e_pv = rel(c_pv, pitch_ref.phase_vocoder(c_stft, rate))
    e_istft = rel(c_stretch, pitch_ref.istft(c_pv, pitch_ref.stretch_length(len(x), rate)))
    ref_stretch = pitch_ref.time_stretch(x, rate)
    e_st = rel(c_stretch, ref_stretch)
    # the resampling of the C stretch: the same libsoxr, so equal
    e_sx = rel(c_shift, pitch_ref.pitch_shift(x, SR, steps, stretched=c_stretch))
    e_sh = rel(c_shift, pitch_ref.pitch_shift(x, SR, steps))
    noise = rel(ref_stretch, pitch_ref.time_stretch(x, rate, acc=np.float64))
    print(f"{what:10s} vocoder {e_pv:.1e}  stretch {e_st:.1e}  soxr step {e_sx:.1e}  shift {e_sh:.1e}"
          f"  (f32 noise {noise:.1e})")
    assert e_stft <= TOL_STFT, f"{what}: STFT {e_stft:.2e} > {TOL_STFT}"
    assert e_pv <= TOL_PV, f"{what}: phase vocoder on the same STFT {e_pv:.2e} > {TOL_PV}"
    assert e_istft <= TOL_ISTFT, f"{what}: ISTFT {e_istft:.2e} > {TOL_ISTFT}"
    assert len(c_stretch) == len(ref_stretch), f"{what}: stretch length {len(c_stretch)} != {len(ref_stretch)}"
    assert e_st <= TOL_STRETCH, f"{what}: time stretch {e_st:.2e} > {TOL_STRETCH}"
    assert e_sx <= TOL_SOXR, f"{what}: resampling of the same stretch {e_sx:.2e} > {TOL_SOXR}"
    assert e_sh <= TOL_SHIFT, f"{what}: pitch shift {e_sh:.2e} > {TOL_SHIFT}"


def test_soxr(x, run):
    """The resampler glue alone equals libsoxr through ctypes; python-soxr's chunks equal one shot."""
    y = pitch_ref.time_stretch(x, 2 ** (-7 / 12))
    in_rate = SR / 2 ** (-7 / 12)
    out = os.path.join(WORK, "soxr.f32")
    run("soxr", save("soxr_in.f32", y), repr(in_rate), SR, out)
    ref = pitch_ref.soxr_resample(y, in_rate, SR)
    assert rel(load(out), ref) == 0, f"soxr: C and ctypes differ by {rel(load(out), ref):.2e}"
    one = pitch_ref.soxr_oneshot(y, in_rate, SR)
    assert len(one) == len(ref) and rel(one, ref) <= TOL_SOXR, "soxr: chunked and one-shot differ"


def to16k(x):
    y = pitch_ref.soxr_resample(x, SR, f0_ref.RATE)
    return pitch_ref.fix_length(y, int(np.ceil(len(x) * f0_ref.RATE / SR)))


@pytest.fixture(scope="module")
def c_median(run):
    """The C median F0 of a signal and its voiced frame count."""
    def median(x, sr=SR):
        med, voiced = run("f0", save("f0_in.f32", x), sr).split()
        return float(med), int(voiced)
    return median


@pytest.fixture(scope="module")
def speech_f0(run, c_median):
    """F0 of espeak-ng speech at a pitch: the C track against YIN in numpy, the C median."""
    @functools.cache
    def get(pitch):
        x = speech(f"f0_p{pitch}", pitch, F0_TEXT)
        x16 = to16k(x)
        track_path = os.path.join(WORK, f"track_p{pitch}.f32")
        run("f0", save(f"f0_16k_p{pitch}.f32", x16), f0_ref.RATE, track_path)
        return x16, load(track_path), f0_ref.track(x16), c_median(x)
    return get


@pytest.mark.parametrize("pitch", [20, 80])
def test_f0_track(pitch, speech_f0):
    """The C F0 track and median of espeak-ng speech at PITCH equal the numpy YIN's
    (voicing where not a near-tie, F0 and median within 1e-4), and Praat's median within a semitone."""
    x16, c_track, (ref_track, margins), (med, voiced) = speech_f0(pitch)
    sure = margins > 1e-4   # frames whose voicing decision is not a near-tie
    assert len(c_track) == len(ref_track), f"p{pitch}: {len(c_track)} frames, ref {len(ref_track)}"
    both = sure & (ref_track > 0)
    assert np.array_equal(c_track[sure] > 0, ref_track[sure] > 0), f"p{pitch}: voicing differs"
    e = float(np.max(np.abs(c_track[both] - ref_track[both]) / ref_track[both]))
    assert e <= TOL_F0, f"p{pitch}: F0 track {e:.2e} > {TOL_F0}"
    ref_med = f0_ref.median_voiced(ref_track)
    assert abs(med - ref_med) <= TOL_F0 * ref_med, f"p{pitch}: median {med} != ref {ref_med}"
    print(f"espeak -p {pitch}: median F0 {med:.2f} Hz ({voiced} of {len(ref_track)} frames voiced, "
          f"{np.sum(~sure)} near-ties), track {e:.1e}")
    pr = f0_ref.praat_f0(x16)
    if pr is not None:
        pm = f0_ref.praat_median(pr)
        print(f"Praat to_pitch_ac {pm:.2f} Hz, {12 * np.log2(med / pm):+.2f} semitones")
        assert abs(12 * np.log2(med / pm)) < 1.0, f"p{pitch}: YIN and Praat medians differ by a semitone"


def test_f0_shift_between_voices(speech_f0, run):
    """The higher voice has the higher median, and the C shift between them is the reference's rule."""
    high, low = speech_f0(80)[3][0], speech_f0(20)[3][0]
    assert high > low * 1.15, f"espeak -p 80 not higher than -p 20: {high}, {low}"
    steps = int(run("steps", high, low))
    assert steps == f0_ref.semitone_shift(high, low), f"shift p20 -> p80: {steps}"


@pytest.mark.parametrize("hz", [110.0, 261.6, 440.0])
def test_f0_tone(hz, c_median):
    """A pure tone's median F0 is within 0.5 % of its frequency."""
    t = np.arange(2 * SR) / SR
    med, voiced = c_median((0.5 * np.sin(2 * np.pi * hz * t)).astype(np.float32))
    assert abs(med / hz - 1) < 0.005, f"tone {hz} Hz: median {med}"


def test_f0_silence(c_median, run):
    """Silence: nothing voiced, median 0, and no shift from it."""
    med, voiced = c_median(np.zeros(SR, np.float32))
    assert med == 0 and voiced == 0, f"silence: median {med}, {voiced} voiced"
    assert int(run("steps", 200, med)) == 0, "silence: a shift"


@pytest.mark.parametrize("ratio,want", SHIFT_TABLE)
def test_shift_rule(ratio, want, run):
    """The C semitone shift of a frequency ratio is the table's and the reference's."""
    got = int(run("steps", 100 * ratio, 100))
    assert got == want == f0_ref.semitone_shift(100 * ratio, 100), \
        f"shift of ratio {ratio:.4f}: C {got}, ref {f0_ref.semitone_shift(100 * ratio, 100)}, want {want}"


def test_timing(run):
    """One 10 s pitch shift (+3 steps), best of 3, one thread: it runs (the time is printed)."""
    x = speech("speech10", 50, TEXT, 10.0)
    secs = float(run("time", save("speech10.f32", x), SR, 3))
    print(f"pitch shift of 10 s: {1000 * secs:.1f} ms")


def test_bad_inputs(driver):
    """Bad inputs of the C functions give AC_ERR_ARG with a message."""
    p = subprocess.run([driver("test_vevo2_pitch"), "bad"], capture_output=True, text=True)
    assert p.returncode == 0, f"bad inputs: {p.stderr.strip()[-2000:]}"
