"""What the CLI tests share: running audioc, the data they read, checking a
clean failure, reading and writing safetensors files."""
import glob
import json
import os
import struct

from testenv import BUNDLED_MODEL, DATA, MARBLE_DIR, ROOT, SILERO, SILERO_DIR, audioc  # noqa: F401 (shared names)

LIBRI = os.path.join(DATA, "asr_validation/librispeech")
CLIP = os.path.join(LIBRI, "librispeech_test_other_7902-96591-0000.wav")
SAMPLES = sorted(glob.glob(os.path.join(ROOT, "samples", "*.flac")))


def clean_failure(what, rc, err, needle):
    """A bad input must end in exit 1 with a message, not a crash."""
    assert rc == 1, f"{what}: exit code {rc} (want 1); stderr: {err.strip()[:300]}"
    assert needle in err, f"{what}: message lacks '{needle}': {err.strip()[:300]}"
    assert "Sanitizer" not in err and "runtime error" not in err, f"{what}: sanitizer report: {err[:500]}"


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
