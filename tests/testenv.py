"""Where the Python tests find the build's programs, the data and their work
folder: the environment ctest sets (tests/CMakeLists.txt), else build/ and
../shared/data beside the checkout, so plain `pytest` works after `make build`."""
import os
import shutil
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("AUDIOC_BUILD") or os.path.join(ROOT, "build")


def _env(var, default):
    return os.environ.get(var) or default


AUDIOC = _env("AUDIOC", os.path.join(BUILD, "audioc"))
AUDIOC_SERVER = _env("AUDIOC_SERVER", os.path.join(os.path.dirname(AUDIOC), "audioc-server"))
AUDIOC_SHARED = _env("AUDIOC_SHARED", os.path.join(BUILD, "libaudioc.so"))
DATA = _env("AUDIOC_DATA", os.path.join(ROOT, "..", "shared", "data"))
WORK = _env("TEST_WORK", os.path.join(BUILD, "testdata"))
SANITIZED = os.environ.get("SANITIZED", "0") in ("1", "ON", "TRUE", "true")
PY = "/usr/bin/python3"
TOKENIZER = os.path.join(DATA, "cohere_asr_base/tokenizer.model")
SILERO_DIR = os.path.join(DATA, "framework/models/silero_vad")
SILERO = os.path.join(SILERO_DIR, "silero_vad_16k.safetensors")
MARBLE_DIR = os.path.join(DATA, "framework/models/marblenet_vad")
BUNDLED_MODEL = os.path.join(ROOT, "models", "hviske-tiny-da")  # ships in the repository: the default model


def driver(name):
    """A stage driver (tests/drivers/NAME.c): $NAME in capitals, else build/tests/NAME."""
    return _env(name.upper().replace("TEST_", ""), os.path.join(BUILD, "tests", name))


def work(name):
    """A test's own folder under the work dir, made if missing."""
    path = os.path.join(WORK, name)
    os.makedirs(path, exist_ok=True)
    return path


def require(*paths):
    """Skips the test when any of PATHS (data outside the repository) is missing."""
    missing = [p for p in paths if not os.path.exists(p)]
    if missing:
        pytest.skip(f"data not found: {missing}")


def require_tools(*tools):
    """Skips the test when any of TOOLS is not on PATH."""
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        pytest.skip(f"tools not found: {missing}")


def audioc(*args, **kw):
    """Runs audioc; returns (exit code, stdout, stderr)."""
    p = subprocess.run([AUDIOC, *args], capture_output=True, text=True, **kw)
    return p.returncode, p.stdout, p.stderr
