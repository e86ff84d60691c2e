"""The official OpenAI Node SDK (npm `openai`, installed into tests/node by
scripts/setup.sh) as the server tests drive it: a list of calls run by
tests/node/sdk_client.js, and the checks of their results."""
import json
import os
import subprocess

import pytest

import serverlib as ts
import testenv

NODE_DIR = os.path.join(testenv.ROOT, "tests", "node")
CLIENT = os.path.join(NODE_DIR, "sdk_client.js")


def sdk(port, calls, api_key="none"):
    """Runs CALLS through the SDK; one {ok, value | error} per call."""
    spec = {"base": f"http://127.0.0.1:{port}/v1", "apiKey": api_key, "calls": calls,
            "timeoutMs": 1000 * ts.HTTP_TIMEOUT}
    p = subprocess.run(["node", CLIENT], input=json.dumps(spec), capture_output=True, text=True,
                       timeout=ts.HTTP_TIMEOUT * max(1, len(calls)))
    if p.returncode != 0:
        pytest.fail(f"the SDK client ran (exit {p.returncode}): {p.stderr[-1000:]}")
    return json.loads(p.stdout)


def value(res, what):
    """The value of a call that must succeed."""
    assert res["ok"], f"SDK {what}: succeeds ({res.get('error')})"
    return res.get("value")


def expect_error(res, cls, status, what):
    """A call the SDK must refuse with its exception class CLS and the HTTP STATUS."""
    e = res.get("error") or {}
    assert not res["ok"] and e.get("class") == cls and e.get("status") == status, (
            f"SDK {what}: {cls} with status {status} (got {res})")
