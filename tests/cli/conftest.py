"""The CLI tests run the built audioc (see tests/conftest.py)."""
import pytest

import testenv
from common import CLIP


@pytest.fixture(autouse=True, scope="session")
def built(audioc):
    """Every CLI test needs the program."""


@pytest.fixture(scope="session")
def vad_data():
    """The real VAD weights and a LibriSpeech clip."""
    testenv.require(testenv.SILERO, testenv.MARBLE_DIR, CLIP)
