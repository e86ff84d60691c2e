"""Shared helpers of the CLI tests: running audioc, checking results."""
import glob
import json
import os
import struct
import subprocess
import sys

AUDIOC = os.environ["AUDIOC"]
DATA = os.environ.get("AUDIOC_DATA", "")
SANITIZED = os.environ.get("SANITIZED", "0") in ("1", "ON", "TRUE", "true")
SKIP = 77
SILERO_DIR = os.path.join(DATA, "framework/models/silero_vad")
SILERO = os.path.join(SILERO_DIR, "silero_vad_16k.safetensors")
MARBLE_DIR = os.path.join(DATA, "framework/models/marblenet_vad")
LIBRI = os.path.join(DATA, "asr_validation/librispeech")
CLIP = os.path.join(LIBRI, "librispeech_test_other_7902-96591-0000.wav")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUNDLED_MODEL = os.path.join(ROOT, "models", "hviske-tiny-da")  # ships in the repository: the default model
SAMPLES = sorted(glob.glob(os.path.join(ROOT, "samples", "*.flac")))


class Checker:
    def __init__(self):
        self.checks = 0
        self.failures = []

    def __call__(self, cond, msg):
        self.checks += 1
        if not cond:
            self.failures.append(msg)
            print("FAIL", msg, file=sys.stderr)
        return cond

    def finish(self):
        print(f"{self.checks - len(self.failures)} passed, {len(self.failures)} failed")
        return 1 if self.failures else 0


def have_data():
    return os.path.exists(SILERO) and os.path.isdir(MARBLE_DIR) and os.path.exists(CLIP)


def audioc(*args, **kw):
    """Runs audioc; returns (exit code, stdout, stderr)."""
    p = subprocess.run([AUDIOC, *args], capture_output=True, text=True, **kw)
    return p.returncode, p.stdout, p.stderr


def clean_failure(check, what, rc, err, needle):
    """A bad input must end in exit 1 with a message, not a crash."""
    check(rc == 1, f"{what}: exit code {rc} (want 1); stderr: {err.strip()[:300]}")
    check(needle in err, f"{what}: message lacks '{needle}': {err.strip()[:300]}")
    check("Sanitizer" not in err and "runtime error" not in err, f"{what}: sanitizer report: {err[:500]}")


def read_st(path):
    """A safetensors file's header (dict) and data section (bytes)."""
    blob = open(path, "rb").read()
    n = struct.unpack("<Q", blob[:8])[0]
    return json.loads(blob[8:8 + n]), blob[8 + n:]


def write_st(path, header, data):
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + data)
    return path
