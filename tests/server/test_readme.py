"""The README's examples, run as written: every `build/audioc` and `curl`
command of its sh blocks that needs only what the repository holds (the
bundled models, samples/) runs in a folder where build/ holds the binaries
under test, the curl commands against `build/audioc-server` started with
no options (the bundled models) on a free port in place of 8080. Each must
succeed (exit 0, HTTP 200), and a command followed by a `# OUTPUT` comment
line must print that. Commands that need a model or file the repository
does not have (a Hub download, interview.mp3) are listed as not run.
Environment: AUDIOC, AUDIOC_SERVER, TEST_WORK."""
import os
import re
import shlex
import subprocess

import testenv
from serverlib import free_port
from testenv import AUDIOC, ROOT

WORK = testenv.work("test_readme")
AUDIO = (".wav", ".flac", ".mp3", ".m4a", ".opus", ".ogg", ".webm", ".mov", ".gguf", ".safetensors", ".pt")


def examples():
    """(words, the expected output or None, the line) of each command of the README's sh blocks."""
    with open(os.path.join(ROOT, "README.md")) as f:
        blocks = re.findall(r"```sh\n(.*?)```", f.read(), re.S)
    out = []
    for block in blocks:
        lines = block.replace("\\\n", " ").split("\n")
        for i, line in enumerate(lines):
            try:
                words = shlex.split(line, comments=True)
            except ValueError:
                continue
            if not words or words[0] not in ("build/audioc", "curl"):
                continue
            nxt = lines[i + 1] if i + 1 < len(lines) else ""
            out.append((words, nxt[2:].strip() if nxt.startswith("# ") else None, line.strip()))
    return out


BUNDLED = ("hviske-tiny-da", "silero-vad")   # what the server serves with no options


def runnable(words):
    """Whether the command needs only what the repository holds."""
    if words[0] == "build/audioc" and (len(words) < 2 or words[1] == "pull"):
        return False
    if words[0] == "curl":
        text = " ".join(words)
        named = re.findall(r'model=([^\s]+)|"model": *"([^"]+)"', text)
        if re.search(r"/v1/audio/(speech|conversions|voices)", text):   # no voice model is bundled
            return False
        if any((a or b) not in BUNDLED for a, b in named):
            return False
    for w in words[1:]:
        if "hf:" in w or "*" in w:
            return False
        path = w.split("=@", 1)[1] if "=@" in w else w if w.lower().endswith(AUDIO) or w.endswith("/") else None
        if path and not path.startswith("http") and not os.path.exists(os.path.join(WORK, path)):
            if not ("-o" in words and words[words.index("-o") + 1] == w):   # an output is made
                return False
    return True


def test_readme_examples():
    os.makedirs(os.path.join(WORK, "build"), exist_ok=True)
    for name, target in (("samples", os.path.join(ROOT, "samples")), ("models", os.path.join(ROOT, "models")),
                         ("build/audioc", AUDIOC), ("build/audioc-server", testenv.AUDIOC_SERVER)):
        link = os.path.join(WORK, name)
        if os.path.lexists(link):
            os.remove(link)
        os.symlink(target, link)
    port = free_port()
    log = open(os.path.join(WORK, "server.log"), "w")
    srv = subprocess.Popen(["build/audioc-server", "--port", str(port)], cwd=WORK, stdout=subprocess.PIPE,
                           stderr=log)
    try:
        assert b"listening on" in srv.stdout.readline(), "the server with no options starts"
        ran, skipped = [], []
        for words, expect, line in examples():
            if not runnable(words):
                skipped.append(line)
                continue
            cmd = [w.replace("127.0.0.1:8080", f"127.0.0.1:{port}") for w in words]
            if cmd[0] == "curl":
                cmd[1:1] = ["-sS", "-w", "\n%{http_code}"]
            p = subprocess.run(cmd, cwd=WORK, capture_output=True, text=True, timeout=300)
            out = p.stdout
            if cmd[0] == "curl":
                out, _, code = out.rpartition("\n")
                assert code == "200", f"README: {line}\n  HTTP {code}: {out[-300:]}"
            assert p.returncode == 0, f"README: {line}\n  exit {p.returncode}: {p.stderr[-300:]}"
            if expect is not None:
                assert out.strip() == expect, f"README: {line}\n  prints {out.strip()!r}, the README says {expect!r}"
            ran.append(line)
        print(f"  ran {len(ran)} README examples; not run (they need models or files the repository lacks): "
              f"{len(skipped)}")
        assert len(ran) >= 4 and any(r.startswith("curl") for r in ran), f"the README's runnable examples: {ran}"
    finally:
        srv.terminate()
        srv.wait(30)
        log.close()
