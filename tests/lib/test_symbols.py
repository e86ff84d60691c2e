"""libaudioc.a, the installed archive, defines no global symbol but ac_* (nm),
so a program links it beside whisper.cpp, llama.cpp or ggml: a stand-in
that defines the library's own internal names (whisper_encode, ...) links
with it and runs a transcription on the bundled model."""
import os
import re
import subprocess

import pytest

from testenv import AUDIOC, BUNDLED_MODEL, ROOT, work

ARCHIVE = os.environ.get("AUDIOC_STATIC", "")
INTERNAL = os.environ.get("AUDIOC_INTERNAL", "")
CC = os.environ.get("CC_FOR_TEST", "cc")
SAN_FLAGS = os.environ.get("SANITIZE_FLAGS", "").split()
REQUIRES = os.environ.get("AUDIOC_PC_REQUIRES", "").split()
SAMPLE = os.path.join(ROOT, "samples", "da_04_sentence.flac")


def defined_globals(archive):
    """The global symbols ARCHIVE defines."""
    out = subprocess.run(["nm", "-g", "--defined-only", archive], capture_output=True, text=True, check=True).stdout
    return {f[2] for f in (line.split() for line in out.splitlines()) if len(f) == 3}


@pytest.fixture(scope="module")
def archives():
    for path in (ARCHIVE, INTERNAL):
        if not os.path.exists(path):
            pytest.fail(f"{path!r} not found: set AUDIOC_STATIC and AUDIOC_INTERNAL (ctest does)")
    return defined_globals(ARCHIVE), defined_globals(INTERNAL)


def test_only_ac_symbols(archives):
    """Every global symbol libaudioc.a defines starts with ac_, and it defines the whole API."""
    public, internal = archives
    assert public and all(s.startswith("ac_") for s in public), (
        f"only ac_ symbols: {sorted(s for s in public if not s.startswith('ac_'))[:20]}")
    header = open(os.path.join(ROOT, "include/audioc.h")).read()
    api = set(re.findall(r"\bAC_API\b[^;{]*?\b(ac_\w+)\s*\(", header))
    assert api <= public, f"the API is defined: missing {sorted(api - public)}"
    assert any(not s.startswith("ac_") for s in internal), "the internal archive keeps its internal names"


STUB = r"""
#include <audioc.h>
#include <stdio.h>
%s
int main(int argc, char **argv)
{
    ac_model *m;
    ac_asr_result *r;
    ac_audio_input in = ac_input_file(argv[2]);
    if (ac_model_load(argv[1], NULL, &m) || ac_asr_transcribe(m, &in, NULL, &r)) {
        fprintf(stderr, "%%s\n", ac_last_error());
        return 1;
    }
    printf("%%s\n", r->text);
    ac_asr_result_free(r);
    ac_model_free(m);
    return %s == 7 ? 0 : 2;
}
"""


def test_links_beside_the_same_names(archives):
    """A program defining whisper_encode and other names the library uses inside links with libaudioc.a, and
    both run: the program's own and the library's transcription of the bundled model."""
    _, internal = archives
    names = ["whisper_encode"] + [min(s for s in internal if s.startswith(p)) for p in ("hviske_", "vevo2_", "qwen2_")]
    assert all(n in internal for n in names), f"{names}: names the library uses inside"
    folder = work("symbols")
    src, exe = os.path.join(folder, "beside.c"), os.path.join(folder, "beside")
    with open(src, "w") as f:
        f.write(STUB % ("".join(f"int {n}(void) {{ return 7; }}\n" for n in names), f"{names[0]}()"))
    libs = subprocess.run(["pkg-config", "--libs", *REQUIRES], capture_output=True, text=True, check=True).stdout
    p = subprocess.run([CC, *SAN_FLAGS, src, "-o", exe, f"-I{ROOT}/include", ARCHIVE, *libs.split(), "-lpthread",
                        "-lm"], capture_output=True, text=True)
    assert p.returncode == 0, f"links beside {names}: {p.stderr.strip()[-800:]}"
    want = subprocess.run([AUDIOC, "transcribe", "--no-vad", SAMPLE], capture_output=True, text=True).stdout
    p = subprocess.run([exe, BUNDLED_MODEL, SAMPLE], capture_output=True, text=True)
    assert p.returncode == 0 and p.stdout == want and want.strip(), (
        f"both run: {p.returncode} {p.stdout.strip()} {p.stderr.strip()[-300:]}; the CLI: {want.strip()}")
