"""The Hugging Face hub cache as huggingface_hub lays it out, written and
read here independently of audio.c (huggingface_hub itself is not
installed): models--ORG--NAME/{blobs/ETAG, snapshots/COMMIT/PATH -> relative
link to ../../blobs/ETAG, refs/REVISION}."""
import hashlib
import os


def repo_folder(cache, repo):
    return os.path.join(cache, "models--" + repo.replace("/", "--"))


def etag_of(path, data):
    """An LFS file is named by its SHA-256, any other by its git blob hash."""
    if path.endswith((".safetensors", ".pt", ".bin", ".model")):
        return hashlib.sha256(data).hexdigest()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def write(cache, repo, files, commit, revision="main"):
    """FILES {path: bytes} at COMMIT into CACHE, REVISION naming it."""
    folder = repo_folder(cache, repo)
    for path, data in files.items():
        etag = etag_of(path, data)
        blob = os.path.join(folder, "blobs", etag)
        os.makedirs(os.path.dirname(blob), exist_ok=True)
        with open(blob, "wb") as f:
            f.write(data)
        link = os.path.join(folder, "snapshots", commit, path)
        os.makedirs(os.path.dirname(link), exist_ok=True)
        os.symlink(os.path.relpath(blob, os.path.dirname(link)), link)
    os.makedirs(os.path.join(folder, "refs"), exist_ok=True)
    with open(os.path.join(folder, "refs", revision), "w") as f:
        f.write(commit)


def lookup(cache, repo, filename, revision="main"):
    """huggingface_hub's try_to_load_from_cache: the cached path of FILENAME
    at REVISION, or None."""
    folder = repo_folder(cache, repo)
    if not os.path.isdir(folder):
        return None
    commit = revision
    ref = os.path.join(folder, "refs", revision)
    if os.path.isfile(ref):
        with open(ref) as f:
            commit = f.read()
    path = os.path.join(folder, "snapshots", commit, filename)
    return path if os.path.isfile(path) else None


def check(cache, repo):
    """The layout's rules hold for REPO: every snapshot entry is a relative
    link into its blobs/, every blob named by a SHA-256 holds those bytes,
    no download is left half done. Returns {commit: sorted files}."""
    folder = repo_folder(cache, repo)
    blobs = os.path.join(folder, "blobs")
    for name in os.listdir(blobs):
        assert not name.endswith(".incomplete"), f"a download left half done: {name}"
        if len(name) == 64:
            with open(os.path.join(blobs, name), "rb") as f:
                assert hashlib.sha256(f.read()).hexdigest() == name, f"blob {name} holds other bytes"
    out = {}
    snaps = os.path.join(folder, "snapshots")
    for commit in os.listdir(snaps):
        files = []
        for d, _, names in os.walk(os.path.join(snaps, commit)):
            for n in names:
                p = os.path.join(d, n)
                assert os.path.islink(p), f"{p} is a link"
                target = os.readlink(p)
                assert not os.path.isabs(target), f"{p} links by a relative path ({target})"
                real = os.path.realpath(p)
                assert os.path.dirname(real) == os.path.realpath(blobs), f"{p} links into blobs/ ({real})"
                files.append(os.path.relpath(p, os.path.join(snaps, commit)))
        out[commit] = sorted(files)
    return out
