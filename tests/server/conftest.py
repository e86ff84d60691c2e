"""The server tests' fixtures: each file's own work folder, the packages and
clips there (Assets), and servers stopped (and checked for a clean exit)
when a test ends, however it ends."""
import os

import pytest

import sdklib
import serverlib
import testenv


@pytest.fixture(scope="module")
def server_work(request, audioc, audioc_server):
    """WORK/<test file>: the file's logs and clips, apart from the other files'."""
    serverlib.WORK = testenv.work(request.module.__name__)
    return serverlib.WORK


@pytest.fixture(scope="module")
def assets(server_work, tokenizer):
    """The tiny Hviske packages (seeds 0 and 1, and a Q8_0 GGUF) and the clips the tests send."""
    testenv.require(testenv.SILERO)
    testenv.require_tools("sox", "espeak-ng", "ffmpeg")
    a = serverlib.Assets()
    a.build()
    return a


@pytest.fixture
def start_server(server_work):
    """Starts servers for one test; stops the ones still running when it ends."""
    started = []

    def start(*args, **kw):
        started.append(serverlib.Server(*args, **kw))
        return started[-1]
    yield start
    for srv in started:
        srv.stop()


@pytest.fixture(scope="session")
def node_sdk():
    """The official OpenAI SDK through tests/node/sdk_client.js."""
    if not os.path.isdir(os.path.join(sdklib.NODE_DIR, "node_modules", "openai")):
        msg = "the OpenAI SDK is not installed (node and tests/node/node_modules/openai: run scripts/setup.sh)"
        if os.environ.get("CI"):
            pytest.fail(msg)
        pytest.skip(msg)
    testenv.require_tools("node")
    return sdklib.CLIENT
