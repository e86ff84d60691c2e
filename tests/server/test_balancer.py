"""Several audioc-server instances behind a real load balancer: Debian's
nginx with the README's configuration (its addresses and port swapped for
local ones) in front of three instances, run as the test's user on free
ports. Clients of the official OpenAI SDK send transcriptions and model
listings through it while one instance is killed midway; every request is
answered, the transcriptions with the CLI's text (nginx sends a request the
dead instance had to another). Skipped with a message where nginx is
absent (scripts/setup.sh installs it).
Environment: AUDIOC, AUDIOC_SERVER, TEST_WORK (as test_server.py)."""
import os
import re
import shutil
import signal
import socket
import subprocess
import threading
import time

import pytest

import sdklib
import serverlib as ts
import testenv
from serverlib import free_port
from testenv import SILERO

NGINX = shutil.which("nginx") or next((p for p in ("/usr/sbin/nginx",) if os.path.exists(p)), None)


def readme_nginx():
    with open(os.path.join(testenv.ROOT, "README.md")) as f:
        blocks = [b for b in re.findall(r"```nginx\n(.*?)```", f.read(), re.S) if "upstream audioc" in b]
    assert len(blocks) == 1, "the README has one nginx configuration of several instances"
    return blocks[0]


def start_nginx(folder, upstreams, port):
    """nginx in the foreground under FOLDER with the README's configuration for UPSTREAMS (ports) on PORT."""
    conf = readme_nginx()
    servers = re.findall(r"^( *)server \d+\.\d+\.\d+\.\d+:\d+( [^;]*)?;\n", conf, re.M)
    assert len(servers) == 3, f"the README's upstream lists three instances: {conf}"
    indent, opts = servers[0]
    lines = "".join(f"{indent}server 127.0.0.1:{p}{opts};\n" for p in upstreams)
    conf = re.sub(r"^ *server \d+\.\d+\.\d+\.\d+:\d+( [^;]*)?;\n", "", conf, flags=re.M)
    conf = conf.replace("    least_conn;\n", "    least_conn;\n" + lines, 1)
    assert "listen 80;" in conf
    conf = conf.replace("listen 80;", f"listen 127.0.0.1:{port};")
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    temp = "".join(f"    {k}_temp_path {folder}/{k};\n" for k in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    with open(os.path.join(folder, "nginx.conf"), "w") as f:
        f.write(("user root;\n" if os.geteuid() == 0 else "") +
                f"daemon off;\nworker_processes 1;\npid {folder}/nginx.pid;\nerror_log {folder}/error.log;\n"
                f"events {{ worker_connections 256; }}\n"
                f"http {{\n    access_log {folder}/access.log;\n{temp}{conf}}}\n")
    p = subprocess.Popen([NGINX, "-p", folder, "-e", f"{folder}/error.log", "-c", f"{folder}/nginx.conf"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    t0 = time.time()
    while time.time() - t0 < 20 and p.poll() is None:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return p
        except OSError:
            time.sleep(0.05)
    p.kill()
    pytest.fail(f"nginx did not start: {p.communicate()[1].decode()[-500:]}")


def test_balancer(assets, start_server, node_sdk):
    if not NGINX:
        pytest.skip("nginx is not installed (scripts/setup.sh installs Debian's nginx)")
    servers = [start_server(f"lb{i}", ["--model", f"tiny={assets.tiny}", "--model", f"silero={SILERO}",
                                       "--workers", "1", "--threads", "1"]) for i in range(3)]
    port = free_port()
    folder = os.path.join(ts.WORK, "nginx")
    nginx = start_nginx(folder, [s.port for s in servers], port)
    try:
        want = assets.asr_text("mid.wav")
        calls = []
        for k in range(6):
            calls.append({"kind": "transcribe", "file": assets.path("mid.wav"), "upload": "buffer",
                          "params": {"model": "tiny", "response_format": "json"}})
            if k % 3 == 2:
                calls.append({"kind": "models.list"})
        results, n_clients = {}, 4

        def client(i):
            results[i] = sdklib.sdk(port, calls)
        threads = [threading.Thread(target=client, args=(i,)) for i in range(n_clients)]
        t0 = time.time()
        for t in threads:
            t.start()
        # kill an instance while requests are on all of them
        victim = servers[1]
        while time.time() - t0 < 60 and sum(1 for line in open(victim.log_path) if " 200 " in line) < 1:
            time.sleep(0.02)
        time.sleep(0.2)
        victim.proc.send_signal(signal.SIGKILL)
        victim.proc.wait()
        victim.stopped = True
        t_kill = time.time() - t0
        for t in threads:
            t.join()
        t_all = time.time() - t0
        answered = 0
        for i in range(n_clients):
            assert len(results[i]) == len(calls), f"client {i}: an answer per call"
            for c, r in zip(calls, results[i]):
                v = sdklib.value(r, f"client {i} {c['kind']} through nginx")
                if c["kind"] == "transcribe":
                    assert v.get("text") == want, f"client {i}: the CLI's text ({v})"
                answered += 1
        with open(os.path.join(folder, "error.log")) as f:
            err = f.read()
        retried = len(re.findall(r"upstream prematurely closed|Connection refused|Connection reset", err))
        print(f"  {answered} of {n_clients * len(calls)} SDK calls answered through nginx in {t_all:.1f} s; "
              f"instance 1 killed at {t_kill:.1f} s; {retried} upstream failures retried on the others")
        assert t_kill < t_all, "the instance was killed while the clients ran"
        for s in (servers[0], servers[2]):
            s.survived("the other instance's death")
    finally:
        nginx.send_signal(signal.SIGQUIT)
        try:
            nginx.wait(20)
        except subprocess.TimeoutExpired:
            nginx.kill()
            nginx.wait()
