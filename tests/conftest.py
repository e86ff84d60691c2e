"""Fixtures every Python test shares: the build's programs, the data, the
tiny model packages (made once, see packages.py), and a whole-file skip shown
to ctest as exit 77 (its SKIP_RETURN_CODE)."""
import os

import pytest

import packages
import testenv


def _program(path, var):
    if not os.access(path, os.X_OK):
        pytest.fail(f"{path} not found: run `make build` first, or set {var}")
    return path


@pytest.fixture(scope="session")
def audioc():
    return _program(testenv.AUDIOC, "AUDIOC")


@pytest.fixture(scope="session")
def audioc_server():
    return _program(testenv.AUDIOC_SERVER, "AUDIOC_SERVER")


@pytest.fixture(scope="session")
def driver():
    """The stage driver NAME (tests/drivers/NAME.c), built or named by its variable."""
    def find(name):
        return _program(testenv.driver(name), name.upper().replace("TEST_", ""))
    return find


@pytest.fixture(scope="session")
def tokenizer():
    testenv.require(testenv.TOKENIZER)
    return testenv.TOKENIZER


@pytest.fixture(scope="session")
def hviske_tiny(tokenizer):
    """The tiny Hviske package (seed 0; _f16 and _bf16 copies beside it)."""
    return packages.hviske(0)


@pytest.fixture(scope="session")
def vevo2_package():
    """Tiny Vevo2 packages by dtype and seed, each made once."""
    return packages.vevo2


def pytest_sessionfinish(session, exitstatus):
    stats = session.config.pluginmanager.get_plugin("terminalreporter").stats
    ran = any(stats.get(k) for k in ("passed", "failed", "error", "xpassed", "xfailed"))
    if exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED) and stats.get("skipped") and not ran:
        session.exitstatus = 77
