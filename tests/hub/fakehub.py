"""A stand-in for the Hugging Face Hub on 127.0.0.1 (http.server), speaking
the part of its protocol huggingface_hub uses to download:

  GET  /api/models/REPO/revision/REV   {"sha": COMMIT, "siblings": [{"rfilename": PATH}, ...]}
  HEAD/GET /REPO/resolve/REV/PATH      a small file: 200 with ETag (its git blob hash),
                                       X-Repo-Commit; an LFS file (*.safetensors, *.pt):
                                       302 to /blobs/SHA256 with X-Linked-Etag (the
                                       SHA-256), X-Linked-Size, X-Repo-Commit
  GET  /blobs/SHA256                   the bytes, with Range (206)

and the faults a client must survive, switched on per test (Hub.faults)."""
import hashlib
import json
import os
import re
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LFS = (".safetensors", ".pt", ".bin", ".model")


def git_blob_sha1(data):
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


class Repo:
    def __init__(self, files, commit=None, refs=("main",)):
        """FILES: {path: bytes}; one commit, named by REFS."""
        self.files = dict(files)
        self.commit = commit or hashlib.sha1(repr(sorted(self.files)).encode() + os.urandom(8)).hexdigest()
        self.refs = {r: self.commit for r in refs}


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass   # a client that hangs up mid-answer (as the tests make it) is no news


class Hub:
    def __init__(self):
        self.repos = {}
        self.blobs = {}
        self.gated = {}          # repo -> token it wants
        self.renamed = {}        # old name -> repo
        self.faults = {}         # name -> value (see Handler)
        self.log = []            # (method, path, headers)
        self.lock = threading.Lock()
        self.server = Server(("127.0.0.1", 0), Handler)
        self.server.hub = self
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def add(self, name, files, **kw):
        r = Repo(files, **kw)
        self.repos[name] = r
        for data in r.files.values():
            self.blobs[hashlib.sha256(data).hexdigest()] = data
        return r

    def requests(self, kind=None):
        with self.lock:
            return [e for e in self.log if kind is None or kind in e[1]]

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    @property
    def hub(self):
        return self.server.hub

    def send(self, status, body=b"", headers=(), length=None):
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body) if length is None else length))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_HEAD(self):
        self.route()

    def do_GET(self):
        self.route()

    def route(self):
        hub = self.hub
        with hub.lock:
            hub.log.append((self.command, self.path, dict(self.headers)))
        path = urllib.parse.unquote(self.path.split("?")[0])
        f = hub.faults
        if "status" in f:
            code, times = f["status"]
            if times > 0:
                f["status"] = (code, times - 1)
                return self.send(code, b"busy")
        for old, new in hub.renamed.items():   # a renamed repository: its old name redirects within the Hub
            for prefix in ("/api/models/", "/"):
                if path.startswith(prefix + old + "/"):
                    return self.send(307, headers=[("Location", prefix + new + path[len(prefix + old):])])
        m = re.fullmatch(r"/api/models/([^/]+/[^/]+)/revision/(.+)", path)
        if m:
            return self.listing(*m.groups())
        m = re.fullmatch(r"/([^/]+/[^/]+)/resolve/([^/]+)/(.+)", path)
        if m:
            return self.resolve(*m.groups())
        m = re.fullmatch(r"/blobs/([0-9a-f]{64})", path)
        if m:
            return self.blob(m.group(1))
        if path.startswith("/loop/"):
            return self.send(302, headers=[("Location", "/loop/" + str(int(path[6:] or 0) + 1))])
        self.send(404, b"not found", [("X-Error-Code", "EntryNotFound")])

    def repo(self, name, rev):
        hub = self.hub
        r = hub.repos.get(name)
        if r is None:
            self.send(404, b"", [("X-Error-Code", "RepoNotFound"), ("X-Error-Message", "Repository not found")])
            return None
        want = hub.gated.get(name)
        if want and self.headers.get("Authorization") != f"Bearer {want}":
            self.send(401, b"", [("X-Error-Code", "GatedRepo"),
                                 ("X-Error-Message", "Access to this model is restricted")])
            return None
        if rev != r.commit and rev not in r.refs:
            self.send(404, b"", [("X-Error-Code", "RevisionNotFound")])
            return None
        return r

    def listing(self, name, rev):
        r = self.repo(name, rev)
        if r is None:
            return
        f = self.hub.faults
        if "listing" in f:
            return self.send(200, f["listing"], [("Content-Type", "application/json")])
        names = list(r.files) + f.get("extra_names", [])
        body = json.dumps({"id": name, "sha": r.commit, "siblings": [{"rfilename": n} for n in names]}).encode()
        self.send(200, body, [("Content-Type", "application/json")])

    def resolve(self, name, rev, path):
        r = self.repo(name, rev)
        if r is None:
            return
        if path not in r.files:
            return self.send(404, b"", [("X-Error-Code", "EntryNotFound")])
        data = r.files[path]
        f = self.hub.faults
        commit = [("X-Repo-Commit", r.commit)]
        if f.get("huge_header"):
            commit.append(("X-Padding", "x" * (1 << 20)))
        if path.endswith(LFS):
            sha = hashlib.sha256(data).hexdigest()
            size = f.get("linked_size", len(data))
            where = "/loop/0" if f.get("redirect_loop") else f"/blobs/{sha}"
            return self.send(302, headers=commit + [("Location", where), ("X-Linked-Etag", f'"{sha}"'),
                                                    ("X-Linked-Size", str(size)), ("ETag", f'"{git_blob_sha1(data)}"')])
        self.send(200, data, commit + [("ETag", f'"{git_blob_sha1(data)}"')])

    def blob(self, sha):
        hub = self.hub
        data = hub.blobs.get(sha)
        if data is None:
            return self.send(404)
        f = hub.faults
        if f.get("corrupt"):
            data = bytes([data[0] ^ 0xFF]) + data[1:]
        start = 0
        rng = self.headers.get("Range")
        m = re.fullmatch(r"bytes=(\d+)-", rng or "")
        if m and not f.get("ignore_range"):
            start = int(m.group(1))
        body = data[start:]
        headers = [("ETag", f'"{sha}"')]
        status = 200
        if start:
            status = 206
            shown = 0 if f.get("wrong_range") else start
            headers.append(("Content-Range", f"bytes {shown}-{len(data) - 1}/{len(data)}"))
        if f.get("extra_bytes"):
            body += b"\0" * f["extra_bytes"]
        cut = f.get("cut")
        if cut is not None and cut[1] > 0:
            # send the head and part of the body (later cuts: none of it), then drop the connection
            f["cut"] = (0, cut[1] - 1)
            self.send_response(status)
            for k, v in headers:
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body[:cut[0]])
            self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(2)
            return
        if f.get("stall"):   # the head, then nothing
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.flush()
            time.sleep(f["stall"])
            self.close_connection = True
            return
        self.send(status, body, headers)
