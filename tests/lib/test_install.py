"""cmake --install as a packager runs it (into a DESTDIR under the build
folder): the CLI, the server, both libraries, the header, audioc.pc and the
bundled models land where they belong; a small program builds against the
installed pkg-config file alone and runs on the installed library; the
installed CLI transcribes with the installed model, and a copy of the
installed tree moved elsewhere, the checkout's path in its binary made
invalid, finds its ASR and VAD models by itself."""
import os
import shutil
import subprocess

import pytest

from testenv import AUDIOC, BUILD, ROOT

CC = os.environ.get("CC_FOR_TEST", "cc")
SAN_FLAGS = os.environ.get("SANITIZE_FLAGS", "").split()
DEST = os.path.join(BUILD, "testdata", "install")
PREFIX = "/opt/audioc"


def run(cmd, env=None):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    return p.returncode, p.stdout, p.stderr


PROGRAM = r"""
#include <audioc.h>
#include <stdio.h>
int main(int argc, char **argv)
{
    const char *family;
    ac_task task;
    if (ac_model_probe(argv[1], &family, &task) != AC_OK) {
        fprintf(stderr, "%s\n", ac_last_error());
        return 1;
    }
    printf("%s %s %s\n", AUDIOC_VERSION, family, ac_task_name(task));
    return argc == 2 ? 0 : 1;
}
"""


@pytest.fixture(scope="module")
def installed():
    """cmake --install into DEST; the install root and its library folder."""
    if os.path.exists(DEST):
        shutil.rmtree(DEST)
    env = dict(os.environ, DESTDIR=DEST)
    rc, out, err = run(["cmake", "--install", BUILD, "--prefix", PREFIX], env=env)
    assert rc == 0, f"cmake --install: {err.strip()[-500:]}"
    root = DEST + PREFIX
    found = {os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs}
    return root, found


def test_installed_files(installed):
    """The CLI, the server, both libraries, the header, audioc.pc and the bundled model are installed."""
    root, found = installed
    libdir = next((os.path.dirname(f) for f in found if f.endswith("libaudioc.a")), None)
    assert libdir is not None, f"libaudioc.a installed ({sorted(found)})"
    libdir = libdir or "lib"
    for f in ("bin/audioc", "bin/audioc-server", "include/audioc.h", f"{libdir}/libaudioc.so",
              f"{libdir}/pkgconfig/audioc.pc", "share/audioc/models/hviske-tiny-da/model.safetensors",
              "share/audioc/models/hviske-tiny-da/tokenizer.model",
              "share/audioc/models/silero-vad/silero_vad_16k.safetensors"):
        assert f in found, f"{f} installed"
    assert any(f.startswith(f"{libdir}/libaudioc.so.") for f in found), "a versioned libaudioc.so.N"


def test_program_builds_against_audioc_pc(installed):
    """A small program builds against the installed audioc.pc alone and runs on the installed library."""
    root, found = installed
    libdir = next((os.path.dirname(f) for f in found if f.endswith("libaudioc.a")), None) or "lib"
    pc_env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(root, libdir, "pkgconfig"))
    rc, flags, err = run(["pkg-config", "--cflags", "--libs", "audioc"], env=pc_env)
    inc = [os.path.normpath(t[2:]) for t in flags.split() if t.startswith("-I")]
    assert rc == 0 and "-laudioc" in flags.split() and inc[:1] == [os.path.join(root, "include")], (
        f"pkg-config --cflags --libs audioc: the installed folders ({flags.strip()} {err.strip()})")
    rc, version, _ = run(["pkg-config", "--modversion", "audioc"], env=pc_env)
    assert rc == 0 and version.strip() == "0.1.0", f"pkg-config --modversion: {version.strip()}"

    src = os.path.join(DEST, "probe.c")
    exe = os.path.join(DEST, "probe")
    with open(src, "w") as f:
        f.write(PROGRAM)
    rc, _, err = run([CC, *SAN_FLAGS, src, "-o", exe, *flags.split()])
    assert rc == 0, f"a program builds against the installed audioc.pc ({err.strip()[-800:]})"
    model = os.path.join(root, "share/audioc/models/hviske-tiny-da")
    run_env = dict(os.environ, LD_LIBRARY_PATH=os.path.join(root, libdir))
    rc, out, err = run([exe, model], env=run_env)
    assert rc == 0 and out.strip() == "0.1.0 hviske_asr transcription", f"it runs on the installed library: {out} {err}"
    rc, out, _ = run(["ldd", exe], env=run_env)
    assert os.path.join(root, libdir, "libaudioc.so") in out, f"... the installed one ({out.strip()[:300]})"


def test_installed_cli(installed):
    """The installed CLI transcribes with the installed model, found by itself; the server answers --help."""
    root, found = installed
    audioc = os.path.join(root, "bin/audioc")
    rc, out, _ = run([audioc, "--version"])
    assert rc == 0 and out.strip() == "audioc 0.1.0", f"installed audioc --version: {out.strip()}"
    sample = os.path.join(ROOT, "samples", "da_01_time.flac")
    want = run([AUDIOC, "transcribe", sample])
    got = run([audioc, "transcribe", "--model", os.path.join(root, "share/audioc/models/hviske-tiny-da"), sample])
    assert got[0] == 0 and got[1] == want[1] and want[1].strip(), f"installed audioc transcribes ({got[2].strip()})"
    env = {k: v for k, v in os.environ.items() if k != "AUDIOC_ASR_MODEL"}
    got = run([audioc, "transcribe", "--timings", sample], env=env)
    assert got[0] == 0 and got[1] == want[1] and f"load {root}/share/audioc/models/hviske-tiny-da" in got[2], (
        f"installed audioc finds its installed model by itself ({got[2].strip()[:300]})")
    rc, out, _ = run([os.path.join(root, "bin/audioc-server"), "--help"])
    assert rc == 0 and "--model" in out, "installed audioc-server --help"


def test_installed_copy_alone(installed):
    """The installed tree moved to another folder, the checkout's path compiled into its CLI overwritten, runs
    `audioc vad` and `audioc transcribe` (with its VAD) on the models it installed."""
    root, _ = installed
    moved = os.path.join(DEST, "moved")
    if os.path.exists(moved):
        shutil.rmtree(moved)
    shutil.copytree(root, moved, symlinks=True)
    exe = os.path.join(moved, "bin/audioc")
    with open(exe, "rb") as f:
        image = f.read()
    source = ROOT.encode()
    assert source in image, "the CLI holds the checkout's path (AUDIOC_SOURCE_DIR)"
    with open(exe, "wb") as f:   # same length: the binary stays valid, the path leads nowhere
        f.write(image.replace(source, b"/" + b"z" * (len(source) - 1)))
    env = {k: v for k, v in os.environ.items() if k not in ("AUDIOC_ASR_MODEL", "AUDIOC_VAD_MODEL")}
    sample = os.path.join(ROOT, "samples", "da_04_sentence.flac")
    want = run([AUDIOC, "vad", sample])
    p = subprocess.run([exe, "vad", sample], capture_output=True, text=True, env=env, cwd=DEST)
    assert p.returncode == 0 and p.stdout == want[1] and want[1].strip(), (
        f"the moved copy's audioc vad uses its installed VAD ({p.stderr.strip()[-300:]})")
    want = run([AUDIOC, "transcribe", "-f", "srt", sample])
    no_vad = run([AUDIOC, "transcribe", "--no-vad", "-f", "srt", sample])
    assert want[1] != no_vad[1], "the sample's times tell whether a VAD ran"
    p = subprocess.run([exe, "transcribe", "-f", "srt", "--timings", sample], capture_output=True, text=True,
                       env=env, cwd=DEST)
    assert p.returncode == 0 and p.stdout == want[1], (
        f"the moved copy transcribes with its installed VAD ({p.stdout.strip()} {p.stderr.strip()[-300:]})")
    assert f"load {moved}/share/audioc/models/hviske-tiny-da" in p.stderr, "... and its installed ASR model"


def test_python_finds_installed_library(installed):
    """The Python package (python/) finds the installed libaudioc.so through the installed audioc.pc, with no
    AUDIOC_LIBRARY set."""
    if os.environ.get("SANITIZED") == "1":   # an ASan library cannot load into a plain python
        pytest.skip("sanitized build")
    root, found = installed
    libdir = next(os.path.dirname(f) for f in found if f.endswith("libaudioc.a"))
    env = {k: v for k, v in os.environ.items() if k not in ("AUDIOC_LIBRARY", "LD_LIBRARY_PATH")}
    env.update(PKG_CONFIG_PATH=os.path.join(root, libdir, "pkgconfig"), PYTHONPATH=os.path.join(ROOT, "python"))
    code = "import audioc, audioc._lib as L; print(audioc.__version__, L.lib()._name)"
    rc, out, err = run(["/usr/bin/python3", "-c", code], env=env)
    assert rc == 0 and out.split()[0] == "0.1.0", f"{out} {err[-400:]}"
    assert os.path.normpath(out.split()[1]) == os.path.join(root, libdir, "libaudioc.so"), f"the installed one: {out}"
