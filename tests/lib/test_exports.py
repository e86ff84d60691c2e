"""libaudioc.so exports exactly the functions include/audioc.h marks AC_API
(nm -D), and loads and answers through ctypes."""
import ctypes
import os
import re
import subprocess

import pytest

import testenv

HEADER = os.path.join(testenv.ROOT, "include/audioc.h")


@pytest.fixture(scope="module")
def lib():
    if not os.path.exists(testenv.AUDIOC_SHARED):
        pytest.fail(f"{testenv.AUDIOC_SHARED} not found: run `make build` first, or set AUDIOC_SHARED")
    return testenv.AUDIOC_SHARED


def test_exports_equal_the_header(lib):
    """The library exports exactly the AC_API functions of audioc.h."""
    header = open(HEADER).read()
    public = set(re.findall(r"\bAC_API\b[^;{]*?\b(ac_\w+)\s*\(", header))
    out = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True, check=True).stdout
    exported = {line.split()[-1] for line in out.splitlines() if line.split() and line.split()[-2] in "TtWDdBbRrV"}
    assert len(public) > 10, f"audioc.h marks {len(public)} functions AC_API"
    assert all(name.startswith("ac_") for name in exported), f"only ac_ symbols: {sorted(exported - public)}"
    assert exported == public, (f"exports equal the header: extra {sorted(exported - public)}, "
                                f"missing {sorted(public - exported)}")


def test_loads_and_answers(lib):
    """The library loads into Python and answers through ctypes."""
    if os.environ.get("SANITIZED") == "1":   # an ASan library cannot load into a plain python
        pytest.skip("loading skipped: sanitized build")
    lib = ctypes.CDLL(lib)
    lib.ac_task_name.restype = ctypes.c_char_p
    assert lib.ac_task_name(1) == b"transcription", "loads and answers (ac_task_name)"
    lib.ac_last_error.restype = ctypes.c_char_p
    lib.ac_model_probe.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_void_p]
    status = lib.ac_model_probe(b"/nonexistent/model", None, None)
    assert status != 0 and b"no such file" in lib.ac_last_error(), "errors through the shared library"
