#!/usr/bin/python3
"""libaudioc.so exports exactly the functions include/audioc.h marks AC_API
(nm -D), and loads and answers through ctypes."""
import ctypes
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
LIB = os.environ["AUDIOC_SHARED"]
HEADER = os.path.join(HERE, "../../include/audioc.h")


def main():
    failed = checks = 0

    def check(ok, msg):
        nonlocal failed, checks
        print(("ok   " if ok else "FAIL ") + msg, file=sys.stderr)
        failed += not ok
        checks += 1

    header = open(HEADER).read()
    public = set(re.findall(r"\bAC_API\b[^;{]*?\b(ac_\w+)\s*\(", header))
    out = subprocess.run(["nm", "-D", "--defined-only", LIB], capture_output=True, text=True, check=True).stdout
    exported = {line.split()[-1] for line in out.splitlines() if line.split() and line.split()[-2] in "TtWDdBbRrV"}
    check(len(public) > 10, f"audioc.h marks {len(public)} functions AC_API")
    check(all(name.startswith("ac_") for name in exported), f"only ac_ symbols: {sorted(exported - public)}")
    check(exported == public, f"exports equal the header: extra {sorted(exported - public)}, "
                              f"missing {sorted(public - exported)}")
    if os.environ.get("SANITIZED") == "1":   # an ASan library cannot load into a plain python
        print("(loading skipped: sanitized build)", file=sys.stderr)
        return 1 if failed else 0
    lib = ctypes.CDLL(LIB)
    lib.ac_task_name.restype = ctypes.c_char_p
    check(lib.ac_task_name(1) == b"transcription", "loads and answers (ac_task_name)")
    lib.ac_last_error.restype = ctypes.c_char_p
    lib.ac_model_probe.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_void_p]
    status = lib.ac_model_probe(b"/nonexistent/model", None, None)
    check(status != 0 and b"no such file" in lib.ac_last_error(), "errors through the shared library")
    print(f"{checks - failed} passed, {failed} failed", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
