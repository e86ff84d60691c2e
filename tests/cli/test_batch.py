"""audioc transcribe as a batch job on a cluster (--shard, --skip-existing,
--manifest): N shards cover every input exactly once, from --shard I/N and
from the schedulers' environment (SLURM array tasks, Kubernetes indexed
jobs); a run killed midway leaves no output that looks finished and is
resumed by running it again; the outputs are those of one plain run.
Environment: AUDIOC, TEST_WORK."""
import glob
import json
import os
import shutil
import signal
import subprocess
import time

import testenv
from testenv import AUDIOC

WORK = testenv.work("test_batch")
SAMPLES = sorted(glob.glob(os.path.join(testenv.ROOT, "samples", "*.flac")))


def inputs(n, name):
    """N inputs under WORK/NAME (the bundled samples, again and again), in a shuffled order."""
    d = os.path.join(WORK, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    files = []
    for i in range(n):
        files.append(os.path.join(d, f"clip_{i:02d}.flac"))
        shutil.copy(SAMPLES[i % len(SAMPLES)], files[-1])
    return files[::2] + files[1::2]


def transcribe(*args, env=None):
    return subprocess.run([AUDIOC, "transcribe", "--threads", "1", *args], capture_output=True, text=True,
                          timeout=600, env=env)


def manifest(path):
    with open(path) as f:
        return [json.loads(line) for line in f]


def outputs(d):
    return {os.path.basename(p): open(p).read() for p in glob.glob(os.path.join(d, "*.txt"))}


def test_shards():
    files = inputs(7, "in")
    whole = os.path.join(WORK, "whole")
    shutil.rmtree(whole, ignore_errors=True)
    r = transcribe("--output-dir", whole, *files)
    assert r.returncode == 0, f"one plain run: {r.stderr[-300:]}"
    want = outputs(whole)
    assert len(want) == 7, f"a transcript per input: {sorted(want)}"
    out = os.path.join(WORK, "shards")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    taken = []
    for i in range(3):
        m = os.path.join(out, f"manifest_{i}.jsonl")
        r = transcribe("--shard", f"{i}/3", "--output-dir", out, "--manifest", m, *files)
        assert r.returncode == 0, f"--shard {i}/3: {r.stderr[-300:]}"
        lines = manifest(m)
        assert all(l["status"] == "ok" and l["error"] is None and l["seconds"] > 0 for l in lines), lines
        taken.append([l["input"] for l in lines])
        assert taken[-1] == sorted(files)[i::3], f"--shard {i}/3 takes every third of the sorted inputs: {taken[-1]}"
    flat = [f for t in taken for f in t]
    assert sorted(flat) == sorted(files) and len(set(flat)) == len(flat), "3 shards cover every input exactly once"
    assert outputs(out) == want and not glob.glob(os.path.join(out, "*.partial")), "the shards' outputs: the plain run's"
    # the schedulers' environment
    base = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "JOB_COMPLETION"))}
    for env, shard, i in (({"SLURM_ARRAY_TASK_ID": "2", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_COUNT": "3"},
                           "auto", 1),
                          ({"JOB_COMPLETION_INDEX": "2"}, "auto/3", 2)):
        m = os.path.join(WORK, f"env_{i}.jsonl")
        if os.path.exists(m):
            os.remove(m)
        r = transcribe("--shard", shard, "--output-dir", os.path.join(WORK, f"env_{i}"), "--manifest", m, *files,
                       env=dict(base, **env))
        assert r.returncode == 0 and [l["input"] for l in manifest(m)] == taken[i], (
                f"--shard {shard} with {env}: shard {i} of 3 ({r.stderr[-300:]})")
    for bad in ("3/3", "x/2", "1", "auto"):
        r = transcribe("--shard", bad, "--output-dir", out, *files, env=base)
        assert r.returncode == 2 and "--shard" in r.stderr, f"--shard {bad}: exit 2 ({r.stderr[-200:]})"
    r = transcribe("--shard", "0/2", *files)
    assert r.returncode == 2 and "--output-dir" in r.stderr, "--shard without files to write: exit 2"


def test_kill_and_resume():
    files = inputs(16, "resume_in")
    out = os.path.join(WORK, "resume")
    shutil.rmtree(out, ignore_errors=True)
    m = os.path.join(WORK, "resume.jsonl")
    if os.path.exists(m):
        os.remove(m)
    p = subprocess.Popen([AUDIOC, "transcribe", "--threads", "1", "--output-dir", out, "--manifest", m, *files],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    t0 = time.time()
    while len(glob.glob(os.path.join(out, "*.txt"))) < 2 and p.poll() is None and time.time() - t0 < 300:
        time.sleep(0.01)
    p.send_signal(signal.SIGKILL)
    p.wait()
    done = glob.glob(os.path.join(out, "*.txt"))
    assert 0 < len(done) < len(files), f"killed midway: {len(done)} of {len(files)} done"
    first = manifest(m)
    r = transcribe("--skip-existing", "--output-dir", out, "--manifest", m, *files)
    assert r.returncode == 0, f"the resumed run: {r.stderr[-300:]}"
    lines = manifest(m)[len(first):]
    skipped = sorted(l["input"] for l in lines if l["status"] == "skipped")
    ran = sorted(l["input"] for l in lines if l["status"] == "ok")
    assert skipped == sorted(os.path.join(os.path.dirname(files[0]), os.path.basename(d)[:-4] + ".flac")
                             for d in done), f"the finished inputs are skipped: {skipped}"
    assert sorted(skipped + ran) == sorted(files), "the rest are transcribed"
    got = outputs(out)
    assert len(got) == len(files) and not glob.glob(os.path.join(out, "*.partial")), (
            f"every input has its output and no partial file is left: {sorted(os.listdir(out))}")
    whole = os.path.join(WORK, "resume_whole")
    shutil.rmtree(whole, ignore_errors=True)
    assert transcribe("--output-dir", whole, *files).returncode == 0
    assert got == outputs(whole), "the killed and resumed run's outputs: a plain run's"
