"""Models from the Hugging Face Hub without the internet: `audioc pull` and
`--model hf:...` (and `audioc quantize hf:...`) against a stand-in Hub on
127.0.0.1 (fakehub.py), the cache
checked with an independent reader of huggingface_hub's layout (hfcache.py),
a cache written by hand in that layout used offline, and the faults a
download must survive: cuts, bad bytes, wrong sizes, hostile answers."""
import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import threading

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fakehub  # noqa: E402
import hfcache  # noqa: E402
import packages  # noqa: E402
import testenv  # noqa: E402

MODELS = os.path.join(testenv.ROOT, "models")
SAMPLE = os.path.join(testenv.ROOT, "samples", "da_01_time.flac")
FM = "acoustic_modeling/fm_emilia101k_singnet7k_repa/"
AR = "contentstyle_modeling/posttrained/"


def folder_files(d):
    out = {}
    for name in sorted(os.listdir(d)):
        if os.path.isfile(os.path.join(d, name)) and not name.endswith(".md"):
            with open(os.path.join(d, name), "rb") as f:
                out[name] = f.read()
    return out


HVISKE = folder_files(os.path.join(MODELS, "hviske-tiny-da"))
SILERO = folder_files(os.path.join(MODELS, "silero-vad"))
JUNK = {"pytorch_model.bin": b"torch weights", "training_args.bin": b"args", "README.md": b"# card",
        "checkpoints/step1.safetensors": b"old"}
VEVO2_NEEDS = [FM + "config.json", FM + "model.safetensors", "tokenizer/contentstyle_fvq16384_12.5hz/model.safetensors",
               "tokenizer/prosody_fvq512_6.25hz/model.safetensors", "vocoder/config.json", "vocoder/model.safetensors",
               AR + "config.json", AR + "model.safetensors"]
VEVO2_WANTS = [FM + "whisper_stats.pt", AR + "amphion_config.json", AR + "vocab.json", AR + "merges.txt"]
VEVO2_NOT = ["vocoder/model_1.safetensors", "vocoder/model_2.safetensors", AR + "optimizer.bin",
             AR + "random_states_0.pkl", "README.md"]
BIG = os.urandom(3 << 20)   # a 3 MB LFS file for the cut and resume cases


@pytest.fixture(scope="module")
def hub():
    h = fakehub.Hub()
    h.add("syvai/hviske-tiny", {**HVISKE, **JUNK}, refs=("main", "v1"))
    h.add("snakers4/silero-vad", SILERO)
    h.add("test/big", {"big.safetensors": BIG, "config.json": b"{}", "sub/notes.txt": b"notes"})
    h.add("test/vevo2", {n: n.encode() for n in VEVO2_NEEDS + VEVO2_WANTS + VEVO2_NOT})
    h.add("openai/whisper-medium", {"config.json": b"{}", "model.safetensors": b"w" * 1000,
                                    "pytorch_model.bin": b"t", "tf_model.h5": b"h5"})
    h.add("test/gated", SILERO)
    h.gated["test/gated"] = "hf_secret"
    yield h
    h.stop()


@pytest.fixture
def env(hub, request):
    """A fresh cache and home for one test, pointed at the stand-in Hub."""
    hub.faults.clear()
    with hub.lock:
        hub.log.clear()
    work = os.path.join(testenv.work("hub"), request.node.name)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(os.path.join(work, "home"))
    e = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGING"))}
    e.update(HOME=os.path.join(work, "home"), HF_HUB_CACHE=os.path.join(work, "cache"), HF_ENDPOINT=hub.url,
             AUDIOC_HUB_BACKOFF="0.02", AUDIOC_HUB_TIMEOUT="5")
    e.pop("XDG_CACHE_HOME", None)
    return e


def run(env, *args, timeout=120):
    p = subprocess.run([testenv.AUDIOC, *args], capture_output=True, text=True, env=env, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def cache(env):
    return env["HF_HUB_CACHE"]


def dead_endpoint():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()   # nothing listens there now
    return f"http://127.0.0.1:{port}"


def test_pull_writes_the_layout_python_reads(audioc, hub, env):
    rc, out, err = run(env, "pull", "syvai/hviske-tiny")
    assert rc == 0, err
    commit = hub.repos["syvai/hviske-tiny"].commit
    assert out.strip() == os.path.join(hfcache.repo_folder(cache(env), "syvai/hviske-tiny"), "snapshots", commit)
    snaps = hfcache.check(cache(env), "syvai/hviske-tiny")
    assert snaps == {commit: sorted(HVISKE)}, "the family's files, not the .bin, card or old checkpoints"
    for name, data in HVISKE.items():
        p = hfcache.lookup(cache(env), "syvai/hviske-tiny", name)
        assert p and open(p, "rb").read() == data
        assert os.path.basename(os.path.realpath(p)) == hfcache.etag_of(name, data), "blobs named by their ETag"
    # a second pull finds everything in the cache: only the file list is asked for
    with hub.lock:
        hub.log.clear()
    rc, out2, err = run(env, "pull", "hf:syvai/hviske-tiny")
    assert rc == 0 and out2 == out, err
    assert [e[1] for e in hub.requests()] == ["/api/models/syvai/hviske-tiny/revision/main"]


def test_hf_model_in_the_cli(audioc, hub, env):
    local = run(env, "transcribe", "--model", os.path.join(MODELS, "hviske-tiny-da"), SAMPLE)
    rc, out, err = run(env, "transcribe", "--model", "hf:syvai/hviske-tiny", SAMPLE)
    assert local[0] == 0 and rc == 0, err
    assert out == local[1], "the model from the Hub transcribes as the local one"
    want = run(env, "vad", "--model", os.path.join(MODELS, "silero-vad"), SAMPLE)[1]
    rc, out, err = run(env, "vad", "--model", "hf:snakers4/silero-vad", SAMPLE)
    assert rc == 0 and out == want, err
    # one file of a repository: that file alone
    shutil.rmtree(cache(env))
    rc, out, err = run(env, "vad", "--model", "hf:snakers4/silero-vad/silero_vad_16k.safetensors", SAMPLE)
    assert rc == 0 and out == want, err
    assert list(hfcache.check(cache(env), "snakers4/silero-vad").values()) == [["silero_vad_16k.safetensors"]]


def test_hviske_v6_repository(audioc, hub, env):
    """A v6 repository (tokenizer.json, no tokenizer.model) pulls as v6, its files and no others, and
    transcribes as the local package; a v5.3 repository that also holds a tokenizer.json still pulls as v5.3."""
    local = packages.hviske_v6()
    v6 = folder_files(local)
    hub.add("syvai/hviske-v6-tiny", {**v6, **JUNK})
    hub.add("syvai/hviske-tiny-json", {**HVISKE, "tokenizer.json": b"{}"})
    rc, _, err = run(env, "pull", "syvai/hviske-v6-tiny")
    assert rc == 0, err
    commit = hub.repos["syvai/hviske-v6-tiny"].commit
    assert hfcache.check(cache(env), "syvai/hviske-v6-tiny") == {commit: sorted(v6)}
    want = run(env, "transcribe", "--model", local, SAMPLE)
    rc, out, err = run(env, "transcribe", "--model", "hf:syvai/hviske-v6-tiny", SAMPLE)
    assert want[0] == 0 and rc == 0, err
    assert out == want[1], "the model from the Hub transcribes as the local one"
    rc, _, err = run(env, "pull", "syvai/hviske-tiny-json")
    assert rc == 0, err
    assert list(hfcache.check(cache(env), "syvai/hviske-tiny-json").values()) == [sorted(HVISKE)], \
        "v5.3's files (its tokenizer.model), not v6's tokenizer.json"


def test_hf_model_quantized(audioc, hub, env):
    """audioc quantize takes hf: as every command does; the file gives what --weights gives."""
    out = os.path.join(os.path.dirname(cache(env)), "hviske-tiny-q8_0.gguf")
    rc, _, err = run(env, "quantize", "hf:syvai/hviske-tiny", out, "--type", "q8_0")
    assert rc == 0, err
    want = run(env, "transcribe", "--model", os.path.join(MODELS, "hviske-tiny-da"), "--weights", "q8_0", SAMPLE)
    got = run(env, "transcribe", "--model", out, SAMPLE)
    assert want[0] == got[0] == 0 and got[1] == want[1], got[2]


def test_python_cache_used_offline(audioc, env):
    """A cache written as huggingface_hub writes it serves with the Hub down."""
    commit = "0123456789abcdef0123456789abcdef01234567"
    hfcache.write(cache(env), "snakers4/silero-vad", SILERO, commit)
    hfcache.write(cache(env), "syvai/hviske-tiny", HVISKE, "89abcdef0123456789abcdef0123456789abcdef", "v2")
    env["HF_ENDPOINT"] = dead_endpoint()
    want = run(env, "vad", "--model", os.path.join(MODELS, "silero-vad"), SAMPLE)[1]
    for how in (["--offline"], []):
        e = dict(env, HF_HUB_OFFLINE="1") if not how else env
        rc, out, err = run(e, "vad", *how, "--model", "hf:snakers4/silero-vad", SAMPLE)
        assert rc == 0 and out == want, err
    # the Hub not answering at all: the cached snapshot, with a warning (as huggingface_hub)
    rc, out, err = run(env, "vad", "--model", "hf:snakers4/silero-vad", SAMPLE)
    assert rc == 0 and out == want and "using the snapshot in the Hub cache" in err, err
    rc, out, err = run(env, "pull", "--offline", "syvai/hviske-tiny@v2")
    assert rc == 0 and out.strip().endswith("snapshots/89abcdef0123456789abcdef0123456789abcdef"), err
    rc, out, err = run(env, "pull", "--offline", f"snakers4/silero-vad@{commit}")
    assert rc == 0, err


def test_offline_names_what_is_missing(audioc, env):
    files = {k: v for k, v in HVISKE.items() if k != "model.safetensors"}
    hfcache.write(cache(env), "syvai/hviske-tiny", files, "0123456789abcdef0123456789abcdef01234567")
    env["HF_HUB_OFFLINE"] = "1"
    rc, _, err = run(env, "transcribe", "--model", "hf:syvai/hviske-tiny", SAMPLE)
    assert rc != 0 and "model.safetensors" in err and "offline" in err and "not in the Hub cache" in err, err
    rc, _, err = run(env, "pull", "other/repo")
    assert rc == 1 and "other/repo@main" in err and "never downloaded" in err, err
    assert not os.path.exists(hfcache.repo_folder(cache(env), "other/repo"))


def test_token_for_a_gated_repository(audioc, hub, env):
    rc, _, err = run(env, "pull", "test/gated")
    assert rc == 1 and "401" in err and "gated" in err and "HF_TOKEN" in err, err
    assert all("Authorization" not in h for _, _, h in hub.requests())
    rc, _, err = run(dict(env, HF_TOKEN="hf_secret"), "pull", "test/gated")
    assert rc == 0, err
    assert any(h.get("Authorization") == "Bearer hf_secret" for _, _, h in hub.requests())
    # the token file huggingface-cli login writes (HF_HOME/token)
    shutil.rmtree(cache(env))
    home = os.path.join(env["HOME"], "hf")
    os.makedirs(home)
    with open(os.path.join(home, "token"), "w") as f:
        f.write("hf_secret\n")
    rc, _, err = run(dict(env, HF_HOME=home), "pull", "test/gated")
    assert rc == 0, err
    # the token goes only to the Hub: never a header broken by a line break in it
    rc, _, err = run(dict(env, HF_TOKEN="hf_secret\r\nX-Evil: 1"), "pull", "test/gated")
    assert rc == 1 and "401" in err
    assert all("X-Evil" not in h for _, _, h in hub.requests())


def test_revisions(audioc, hub, env):
    commit = hub.repos["syvai/hviske-tiny"].commit
    rc, out, err = run(env, "pull", "syvai/hviske-tiny@v1", "--include", "config.json")
    assert rc == 0, err
    refs = os.path.join(hfcache.repo_folder(cache(env), "syvai/hviske-tiny"), "refs")
    assert open(os.path.join(refs, "v1")).read() == commit
    assert hfcache.lookup(cache(env), "syvai/hviske-tiny", "config.json", "v1")
    rc, out, err = run(env, "pull", f"syvai/hviske-tiny@{commit}", "--include", "config.json")
    assert rc == 0 and sorted(os.listdir(refs)) == ["v1"], "a commit makes no ref"
    rc, _, err = run(env, "pull", "syvai/hviske-tiny@nope")
    assert rc == 1 and "404" in err and "syvai/hviske-tiny@nope" in err, err
    rc, _, err = run(env, "pull", "syvai/nothing")
    assert rc == 1 and "404" in err and "no such repository" in err, err


def test_renamed_repository(audioc, hub, env):
    hub.renamed["test/old-big"] = "test/big"
    rc, out, err = run(env, "pull", "test/old-big", "--include", "*.json", "--include", "*.safetensors")
    assert rc == 0, err
    files = hfcache.check(cache(env), "test/old-big")[hub.repos["test/big"].commit]
    assert files == ["big.safetensors", "config.json"]


def test_include_patterns(audioc, hub, env):
    rc, out, err = run(env, "pull", "syvai/hviske-tiny", "--include", "*.json", "--include", "checkpoints/")
    assert rc == 0, err
    files = hfcache.check(cache(env), "syvai/hviske-tiny")[hub.repos["syvai/hviske-tiny"].commit]
    assert files == ["checkpoints/step1.safetensors", "config.json", "generation_config.json"]
    rc, _, err = run(env, "pull", "syvai/hviske-tiny", "--include", "*.onnx")
    assert rc == 1 and "no file of the repository matches" in err, err
    rc, _, err = run(env, "pull", "test/big")
    assert rc == 1 and "no model of a family" in err and "--include" in err, err
    rc, out, err = run(env, "pull", "hf:test/big/sub", "--include", "*.txt")
    assert rc == 0 and out.strip().endswith("/sub") and open(os.path.join(out.strip(), "notes.txt")).read() == "notes"


def test_vevo2_files_and_its_whisper(audioc, hub, env):
    rc, out, err = run(env, "pull", "test/vevo2")
    assert rc == 0, err
    files = hfcache.check(cache(env), "test/vevo2")[hub.repos["test/vevo2"].commit]
    assert files == sorted(VEVO2_NEEDS + VEVO2_WANTS), "no discriminators, optimizer state or card"
    whisper = hfcache.check(cache(env), "openai/whisper-medium")
    assert list(whisper.values()) == [["config.json", "model.safetensors"]]
    # a package that lacks a file its loader reads is named
    hub.add("test/vevo2-part", {n: n.encode() for n in VEVO2_NEEDS[:-1]})
    rc, _, err = run(env, "pull", "test/vevo2-part")
    assert rc == 1 and AR + "model.safetensors" in err and "vevo2" in err, err


def incomplete(env, repo):
    blobs = os.path.join(hfcache.repo_folder(cache(env), repo), "blobs")
    return [n for n in os.listdir(blobs) if n.endswith(".incomplete")] if os.path.isdir(blobs) else []


def test_cut_connection_resumes(audioc, hub, env):
    sha = hashlib.sha256(BIG).hexdigest()
    # cut once: resumed in the same run with Range
    hub.faults["cut"] = (1 << 20, 1)
    rc, out, err = run(env, "pull", "test/big", "--include", "big.safetensors")
    assert rc == 0, err
    ranges = [h.get("Range") for _, p, h in hub.requests("/blobs/")]
    assert ranges == [None, f"bytes={1 << 20}-"], ranges
    assert open(hfcache.lookup(cache(env), "test/big", "big.safetensors"), "rb").read() == BIG
    # cut every time: the run fails, says so, and leaves no file in the cache
    shutil.rmtree(cache(env))
    hub.faults["cut"] = (1 << 20, 100)
    rc, _, err = run(env, "pull", "test/big", "--include", "big.safetensors")
    assert rc == 1 and "big.safetensors" in err and "broke off" in err and "resume" in err, err
    assert hfcache.lookup(cache(env), "test/big", "big.safetensors") is None
    assert not os.path.exists(os.path.join(hfcache.repo_folder(cache(env), "test/big"), "blobs", sha))
    assert incomplete(env, "test/big") == [sha + ".incomplete"]
    # the next run resumes where the last one stopped
    hub.faults.clear()
    with hub.lock:
        hub.log.clear()
    rc, _, err = run(env, "pull", "test/big", "--include", "big.safetensors")
    assert rc == 0, err
    assert [h.get("Range") for _, p, h in hub.requests("/blobs/")] == [f"bytes={1 << 20}-"]
    hfcache.check(cache(env), "test/big")
    assert open(hfcache.lookup(cache(env), "test/big", "big.safetensors"), "rb").read() == BIG
    # a server that ignores Range sends the whole file again: it replaces the part, never follows it
    for fault, ok in (("ignore_range", True), ("wrong_range", False)):
        shutil.rmtree(cache(env))
        hub.faults.clear()
        hub.faults["cut"] = (1 << 20, 1)
        hub.faults[fault] = True
        rc, _, err = run(env, "pull", "test/big", "--include", "*.json", "--include", "big.safetensors")
        assert (rc == 0) == ok, (fault, err)
        if ok:
            assert open(hfcache.lookup(cache(env), "test/big", "big.safetensors"), "rb").read() == BIG
            hfcache.check(cache(env), "test/big")
        else:
            assert "other bytes than the range asked for" in err, err
            assert hfcache.lookup(cache(env), "test/big", "big.safetensors") is None


def test_a_stalled_server_times_out(audioc, hub, env):
    hub.faults["stall"] = 3
    rc, _, err = run(dict(env, AUDIOC_HUB_TIMEOUT="1"), "pull", "test/big", "--include", "big.safetensors",
                     timeout=60)
    assert rc == 1 and "big.safetensors" in err and "stalled" in err and "AUDIOC_HUB_TIMEOUT" in err, err
    assert hfcache.lookup(cache(env), "test/big", "big.safetensors") is None


def test_bad_bytes_are_refused(audioc, hub, env):
    hub.faults["corrupt"] = True
    rc, _, err = run(env, "pull", "test/big", "--include", "big.safetensors")
    assert rc == 1 and "big.safetensors" in err and "SHA-256" in err and "deleted" in err, err
    assert hfcache.lookup(cache(env), "test/big", "big.safetensors") is None and not incomplete(env, "test/big")
    hub.faults.clear()
    # more bytes than announced: stopped at the announced size
    hub.faults["extra_bytes"] = 1000
    rc, _, err = run(env, "pull", "test/big", "--include", "big.safetensors")
    assert rc == 1 and "more than expected" in err, err
    assert hfcache.lookup(cache(env), "test/big", "big.safetensors") is None
    hub.faults.clear()
    # the Hub announces a size the bytes do not have
    hub.faults["linked_size"] = len(BIG) + 10
    rc, _, err = run(env, "pull", "test/big", "--include", "big.safetensors")
    assert rc == 1 and "big.safetensors" in err, err
    assert hfcache.lookup(cache(env), "test/big", "big.safetensors") is None
    blobs = os.path.join(hfcache.repo_folder(cache(env), "test/big"), "blobs")
    assert not [n for n in os.listdir(blobs) if not n.endswith(".incomplete")]


def test_hostile_answers(audioc, hub, env):
    cases = [
        ({"listing": b"{not json"}, "not JSON"),
        ({"listing": json.dumps({"sha": "x", "siblings": []}).encode()}, "commit hash"),
        ({"listing": json.dumps({"sha": "a" * 40, "siblings": [{"rfilename": "../../x"}]}).encode()}, "../../x"),
        ({"listing": json.dumps({"sha": "a" * 40, "siblings": [{"rfilename": "/etc/passwd"}]}).encode()},
         "/etc/passwd"),
        ({"huge_header": True}, "header"),
        ({"redirect_loop": True}, "redirects"),
        ({"status": (500, 100)}, "HTTP 500"),
    ]
    for faults, words in cases:
        hub.faults.clear()
        hub.faults.update(faults)
        rc, _, err = run(env, "pull", "test/big", "--include", "*")
        assert rc == 1 and words in err, (faults, err)
    assert not os.path.exists(os.path.join(cache(env), "..", "x"))
    assert "x" not in os.listdir(os.path.dirname(cache(env)))
    # a 503 or two is waited out
    hub.faults.clear()
    hub.faults["status"] = (503, 2)
    rc, _, err = run(env, "pull", "test/big", "--include", "config.json")
    assert rc == 0, err
    hub.faults.clear()
    for spec in ("../x", "a/../b", "a/b@..", "a--b/c", "a/b/../../c", "/abs/x", "a/b@"):
        rc, _, err = run(env, "pull", spec)
        assert rc == 1 and spec.split("/")[0] in err, (spec, err)
    rc, _, err = run(dict(env, HF_ENDPOINT=dead_endpoint()), "pull", "test/big")
    assert rc == 1 and "test/big@main" in err, err


def test_two_pulls_at_once(audioc, hub, env):
    procs = [subprocess.Popen([testenv.AUDIOC, "pull", "test/big", "--include", "*"], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    assert outs[0][0] == outs[1][0]
    files = hfcache.check(cache(env), "test/big")
    assert list(files.values()) == [["big.safetensors", "config.json", "sub/notes.txt"]]
    assert not incomplete(env, "test/big")


def test_hf_model_in_the_server(audioc_server, hub, env):
    p = subprocess.Popen([testenv.AUDIOC_SERVER, "--model", "vad=hf:snakers4/silero-vad", "--host", "127.0.0.1",
                          "--port", "0"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = p.stdout.readline()
        assert line.startswith("audioc-server: listening on"), p.stderr.read() if p.poll() is not None else line
    finally:
        p.terminate()
        _, err = p.communicate(timeout=30)
    assert "model 'vad': silero_vad" in err, err
    rc = subprocess.run([testenv.AUDIOC_SERVER, "--model", "vad=hf:test/gated", "--port", "0"], env=env,
                        capture_output=True, text=True, timeout=60)
    assert rc.returncode != 0 and "model 'vad'" in rc.stderr and "HF_TOKEN" in rc.stderr, rc.stderr


def test_hf_tokenizer(audioc, hub, env):
    """audioc tokenize --model hf:... fetches the tokenizer's files only."""
    qwen = os.path.join(testenv.DATA, "qwen2.5_tokenizer")
    testenv.require(qwen)
    files = {AR + n: open(os.path.join(qwen, n), "rb").read() for n in os.listdir(qwen)}
    hub.add("test/vevo2-tok", {**files, AR + "model.safetensors": b"weights", FM + "config.json": b"{}"})
    want = run(env, "tokenize", "--model", qwen, "Hej verden")
    rc, out, err = run(env, "tokenize", "--model", "hf:test/vevo2-tok", "Hej verden")
    assert rc == 0 and want[0] == 0 and out == want[1], err
    got = hfcache.check(cache(env), "test/vevo2-tok")[hub.repos["test/vevo2-tok"].commit]
    assert got == sorted(files), "the tokenizer's files, no weights"


def test_hf_vevo2_in_the_cli(audioc, hub, env, vevo2_package):
    """A tiny Vevo2 package on the Hub, and its Whisper from openai/whisper-medium, convert as the local folders do."""
    pkg = vevo2_package("F32", 0)
    files = {}
    for d, _, names in os.walk(pkg):
        for n in names:
            rel = os.path.relpath(os.path.join(d, n), pkg)
            if not rel.startswith(("whisper-medium/", "openai/")):
                files[rel] = open(os.path.join(d, n), "rb").read()
    hub.add("test/vevo2-tiny", files)
    whisper = os.path.join(os.path.dirname(cache(env)), "whisper")
    os.makedirs(whisper)
    wfiles = {}
    for n in ("config.json", "model.safetensors"):
        shutil.copy(os.path.join(pkg, "whisper-medium", n), whisper)
        wfiles[n] = open(os.path.join(whisper, n), "rb").read()
    hub.add("openai/whisper-medium", wfiles)
    out = os.path.dirname(cache(env))
    args = ["--target-voice", os.path.join(testenv.ROOT, "samples", "da_02_date.flac"), SAMPLE, "--seed", "1",
            "--steps", "2", "--threads", "1"]
    rc, _, err = run(env, "vc", "--model", pkg, "--whisper", whisper, *args, "-o", os.path.join(out, "local.wav"))
    assert rc == 0, err
    rc, _, err = run(env, "vc", "--model", "hf:test/vevo2-tiny", *args, "-o", os.path.join(out, "hub.wav"))
    assert rc == 0, err
    assert open(os.path.join(out, "local.wav"), "rb").read() == open(os.path.join(out, "hub.wav"), "rb").read()
    got = hfcache.check(cache(env), "test/vevo2-tiny")[hub.repos["test/vevo2-tiny"].commit]
    assert "vocoder/model_1.safetensors" not in got and "vocoder/model.safetensors" in got


def test_pull_usage(audioc, env):
    rc, out, _ = run(env, "pull", "--help")
    assert rc == 0 and out.startswith("usage: audioc pull REPO") and "HF_TOKEN" in out and "--offline" in out
    for args, words in ((["pull"], "usage: audioc pull"), (["pull", "a/b", "c/d"], "one repository at a time"),
                        (["pull", "--include"], "--include needs a value"), (["pull", "--bogus", "a/b"], "--bogus")):
        rc, _, err = run(env, *args)
        assert rc == 2 and words in err, (args, err)
    rc, out, _ = run(env, "--help")
    assert "pull" in out
