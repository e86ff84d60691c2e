"""The command line as whisper.cpp and GNU tools have taught people to use it:
options anywhere (and --opt=value, --), - for standard input, one output
file per input and format (--output-dir, --output-format, -osrt), several
inputs at once with one model (--parallel), a usage error for a language
the model lacks, and audioc convert refusing a target before making it."""
import json
import os
import re
import warnings
import shutil
import subprocess

import numpy as np
import pytest
from scipy.io import wavfile

import testenv
from common import BUNDLED_MODEL, SILERO, audioc

warnings.filterwarnings("ignore", category=wavfile.WavFileWarning)


def samples(path):
    """The audio of a WAV file as a list (its header aside)."""
    rate, x = wavfile.read(path)
    return [rate, x.dtype.str] + np.asarray(x).reshape(-1).tolist()


WORK = os.path.join(testenv.WORK, "cli_habits")
M = BUNDLED_MODEL


def sh(*cmd):
    subprocess.run(cmd, check=True, capture_output=True)


def path(name):
    return os.path.join(WORK, name)


@pytest.fixture(scope="module", autouse=True)
def clips():
    """Three espeak-ng clips, their concatenation, and awkward file names under WORK."""
    if not os.path.isdir(M):
        pytest.skip("the bundled model was not found")
    if os.path.exists(WORK):
        shutil.rmtree(WORK)
    os.makedirs(os.path.join(WORK, "b"))
    texts = ["Hej med dig, hvordan går det i dag?", "Vejret er godt, og solen skinner over byen.",
             "Klokken er halv tre."]
    for i, t in enumerate(texts):
        sh("espeak-ng", "-v", "da", "-w", path(f"raw{i}.wav"), t)
        sh("sox", "-D", path(f"raw{i}.wav"), "-r", "16000", "-b", "16", path(f"s{i}.wav"))
    sh("sox", "-D", path("s0.wav"), path("s1.wav"), path("s2.wav"), path("long.wav"))   # several chunks
    shutil.copy(path("s1.wav"), path("b/s0.flac.wav"))
    shutil.copy(path("s0.wav"), path("-dash.wav"))
    sh("ffmpeg", "-loglevel", "error", "-y", "-i", path("s2.wav"), "-c:a", "aac", path("s2.m4a"))


def run(*args, **kw):
    return audioc(*args, **kw)


def test_permutation():
    want = run("transcribe", "-m", M, "--format", "srt", path("long.wav"))
    assert want[0] == 0 and want[1].startswith("1\n"), f"srt of one file ({want[2].strip()})"
    for args in (("transcribe", path("long.wav"), "--format", "srt", "-m", M),
                 ("transcribe", path("long.wav"), "--format=srt", "--model=" + M),
                 ("transcribe", "-f", "srt", path("long.wav"), "-m", M, "-t", "1")):
        assert run(*args)[:2] == want[:2], f"options after the file: {' '.join(args[1:])}"
    rc, out, err = run("transcribe", "-m", M, "--", path("-dash.wav"))
    rc2, out2, _ = run("transcribe", "-m", M, path("s0.wav"))
    assert rc == 0 and out == out2, f"-- ends the options: a file named -dash.wav ({err.strip()})"
    rc, _, err = run("transcribe", path("s0.wav"), "-m", M, "--bogus")
    assert rc == 2 and "unknown option '--bogus'" in err, f"an unknown option after the files: usage error ({err})"
    rc, _, err = run("transcribe", path("s0.wav"), "-m")
    assert rc == 2 and "-m needs a value" in err, f"a missing value: usage error ({err.strip()})"
    rc, _, err = run("transcribe", "-m", M, "--tokens=1", path("s0.wav"))
    assert rc == 2 and "--tokens takes no value" in err, f"a value for a switch: usage error ({err.strip()})"
    if os.path.exists(SILERO):
        a = run("vad", "--model", SILERO, "--format", "json", path("long.wav"))
        b = run("vad", path("long.wav"), "--format=json", "--model", SILERO)
        assert a[0] == 0 and a[:2] == b[:2], "vad: options after the file"
    conv = path("conv.wav")
    rc, _, err = run("convert", path("s2.m4a"), conv, "--rate", "8000")
    rc2, out, _ = run("vad", "--model", SILERO, "--format", "json", conv) if os.path.exists(SILERO) else (0, "", "")
    assert rc == 0 and os.path.getsize(conv) > 1000, f"convert: --rate after the files ({err.strip()})"
    for cmd in ("transcribe", "vad", "convert", "vc", "tokenize"):
        rc, out, _ = run(cmd, "--help")
        assert rc == 0 and "usage: audioc " + cmd.split()[0] in out, f"{cmd} --help"


def test_stdin():
    for name in ("s0.wav", "s2.m4a"):
        want = run("transcribe", "-m", M, "--format", "json", path(name))
        got = run("transcribe", "-", "-m", M, "--format", "json", stdin=open(path(name), "rb"))
        jw, jg = json.loads(want[1]), json.loads(got[1]) if got[0] == 0 else {}
        assert (got[0] == 0 and jg.get("text") == jw["text"] and jg.get("segments") == jw["segments"]
                and jg.get("file") == "stdin"), f"transcribe - < {name}: the file's answer ({got[2].strip()})"
    if os.path.exists(SILERO):
        want = json.loads(run("vad", "--model", SILERO, "--format", "json", path("long.wav"))[1])
        rc, out, err = run("vad", "--model", SILERO, "--format", "json", "-", stdin=open(path("long.wav"), "rb"))
        got = json.loads(out) if rc == 0 else {}
        assert got.get("segments") == want["segments"] and got.get("file") == "stdin", f"vad - ({err.strip()})"
    a, b = path("from_file.wav"), path("from_stdin.wav")
    run("convert", path("s2.m4a"), a)
    rc, _, err = run("convert", "-", b, stdin=open(path("s2.m4a"), "rb"))
    # the samples, not the bytes: libsndfile's PEAK chunk carries the time of writing
    assert rc == 0 and samples(a) == samples(b), f"convert - OUT: the same samples ({err.strip()})"
    rc, _, err = run("convert", path("s0.wav"), "-")
    assert rc == 2 and "standard output" in err, f"convert IN -: usage error ({err.strip()})"
    rc, _, err = run("transcribe", "-m", M, "-", "-", stdin=open(path("s0.wav"), "rb"))
    assert rc == 2 and "read once" in err, f"- twice: usage error ({err.strip()})"
    rc, out, err = run("transcribe", "-m", M, "-", stdin=subprocess.DEVNULL)
    assert rc == 1 and "stdin: not a readable audio file" in err, f"empty stdin: a clear error ({err.strip()})"


def read(p):
    with open(p) as f:
        return f.read()


def test_output_files():
    files = [path("s0.wav"), path("long.wav"), path("s2.m4a")]
    single = {fmt: [run("transcribe", "-m", M, "--format", fmt, f)[1] for f in files]
              for fmt in ("text", "json", "srt", "vtt")}
    rc, out, err = run("transcribe", "-m", M, "--format", "srt", *files)
    assert rc == 2 and out == "" and "--output-dir" in err, f"srt of several files on stdout: usage error ({err})"
    rc, out, err = run("transcribe", "-m", M, "--format", "vtt", *files)
    assert rc == 2 and out == "", "vtt of several files on stdout: usage error"
    d = path("out")
    rc, out, err = run("transcribe", *files, "-m", M, "--output-dir", d, "--output-format", "txt,srt,vtt,json")
    assert rc == 0 and out == "", f"--output-dir with four formats: nothing on stdout ({err.strip()})"
    for i, stem in enumerate(("s0", "long", "s2")):
        for fmt, ext in (("text", "txt"), ("json", "json"), ("srt", "srt"), ("vtt", "vtt")):
            p = os.path.join(d, f"{stem}.{ext}")
            ok = os.path.exists(p) and read(p) == single[fmt][i]
            assert ok, f"{p}: what --format {fmt} prints for that input alone"
    srt = read(os.path.join(d, "long.srt"))
    assert re.match(r"1\n00:00:00,\d{3} --> ", srt) is not None, f"long.srt: cues numbered from 1 ({srt[:40]!r})"
    assert read(os.path.join(d, "long.vtt")).count("WEBVTT") == 1, "long.vtt: one header"
    # beside each input, whisper.cpp's -osrt style
    rc, out, err = run("transcribe", "-m", M, "-osrt", "-oj", path("s2.m4a"))
    assert rc == 0 and read(path("s2.srt")) == single["srt"][2] and read(path("s2.json")) == single["json"][2], f"-osrt -oj: s2.srt and s2.json beside the input ({err.strip()})"
    rc, out, err = run("transcribe", "-m", M, "--output-dir", path("only_dir"), "-f", "vtt", path("s0.wav"))
    assert rc == 0 and read(path("only_dir/s0.vtt")) == single["vtt"][0], f"--output-dir with -f vtt ({err.strip()})"
    rc, out, err = run("transcribe", "-m", M, "--output-dir", d, "--output-format", "txt", "-",
                       stdin=open(path("s0.wav"), "rb"))
    assert rc == 0 and read(os.path.join(d, "stdin.txt")) == single["text"][0], f"- writes stdin.txt ({err.strip()})"
    rc, out, err = run("transcribe", "-m", M, "--output-dir", d, path("s0.wav"), path("b/s0.flac.wav"))
    assert rc == 0, f"b/s0.flac.wav and s0.wav write different names ({err.strip()})"
    shutil.copy(path("s0.wav"), path("b/s0.wav"))
    rc, out, err = run("transcribe", "-m", M, "--output-dir", d, path("s0.wav"), path("b/s0.wav"))
    assert rc == 2 and "would write the same files" in err, f"two inputs, one output name: usage error ({err})"
    rc, _, err = run("transcribe", "-m", M, "--output-format", "srt,doc", path("s0.wav"))
    assert rc == 2 and "'doc' is not one of" in err, f"an unknown output format ({err.strip()})"
    open(path("blocker"), "w").write("a file, not a folder")
    rc, _, err = run("transcribe", "-m", M, "--output-dir", path("blocker/sub"), path("s0.wav"))
    assert rc == 1 and "cannot create" in err, f"an --output-dir that cannot be made ({err.strip()})"


def test_parallel():
    files = [path("long.wav"), path("s0.wav"), path("missing.wav"), path("s2.m4a"), path("s1.wav"), path("long.wav")]
    # each of N files at once gets 2/N threads (at least 1): the same sums as one thread alone
    one = run("transcribe", "-m", M, "--format", "json", "-t", "1", *files)
    for n in ("2", "4"):
        many = run("transcribe", "-m", M, "--format", "json", "--parallel", n, "-t", "2", *files)
        assert many[0] == 1 and many[1] == one[1] and one[1].count("\n") == 5, f"--parallel {n}: the same answers in input order, the missing file failing ({many[2].strip()})"
        assert many[2].count("missing.wav: cannot open") == 1, f"--parallel {n}: the missing file named once"
    d1, d4 = path("par1"), path("par4")
    run("transcribe", "-m", M, "--output-dir", d1, "--output-format", "all", "-t", "1", *files[:2])
    run("transcribe", "-m", M, "--output-dir", d4, "--output-format", "all", "-p", "4", "-t", "2", *files[:2])
    same = sorted(os.listdir(d1)) == sorted(os.listdir(d4)) and len(os.listdir(d1)) == 8 and \
        all(read(os.path.join(d1, f)) == read(os.path.join(d4, f)) for f in os.listdir(d1))
    assert same, "--parallel 4 writes the same files"
    # progress of files decoded at once: one line counting finished files, no per-file bars
    rc, _, err = run("transcribe", "-m", M, "--progress", "-p", "2", *files)
    assert "transcribed 6 of 6 files" in err and "%" not in err, f"--parallel with --progress: one count of files, no bars ({err[-300:]!r})"
    rc, _, err = run("transcribe", "-m", M, "--parallel", "0", path("s0.wav"))
    assert rc == 2 and "--parallel" in err, "--parallel 0: usage error"


def test_language():
    rc, out, err = run("transcribe", "-m", M, "-l", "auto", path("s0.wav"), path("s1.wav"))
    assert rc == 2 and out == "" and "language 'auto' is not supported by this model (da)" in err, f"-l auto: usage error naming the model's languages ({rc}, {err.strip()})"
    rc, out, err = run("transcribe", "-m", M, path("s0.wav"), "--language", "xx")
    assert rc == 2 and "language 'xx'" in err and err.count("\n") == 1, f"--language xx: one usage error ({err})"


def test_convert_targets():
    target = path("x22k.opus")
    rc, _, err = run("convert", path("raw0.wav"), target)   # espeak-ng speaks at 22.05 kHz
    assert rc == 1 and "Opus holds 8000, 12000, 16000, 24000 or 48000 Hz only, not 22050 Hz" in err, f"Opus at 22.05 kHz: refused, naming the rates ({err.strip()})"
    assert not os.path.exists(target), "... and no file made"
    rc, _, err = run("convert", "--rate", "96000", path("s0.wav"), path("x.mp3"))
    assert rc == 1 and "MP3 holds" in err and not os.path.exists(path("x.mp3")), f"MP3 at 96 kHz ({err.strip()})"
    rc, _, err = run("convert", "--rate", "24000", path("raw0.wav"), target)
    assert rc == 0 and os.path.getsize(target) > 0, f"Opus at 24 kHz ({err.strip()})"
    cut = path("cut.m4a")
    open(cut, "wb").write(open(path("s2.m4a"), "rb").read()[:300])
    rc, _, err = run("convert", cut, path("cut.wav"))
    assert rc == 1 and not os.path.exists(path("cut.wav")), f"a broken input leaves no output ({err.strip()})"

