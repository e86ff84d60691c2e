#!/usr/bin/python3
"""Pack a cohere_asr (Hviske ASR) safetensors package into one GGUF file, the
way audio.cpp's converter does (specs/hviske_asr.md §1.6); src/io/gguf.c
reads it.

usage: gguf_pack.py PACKAGE_DIR OUT.gguf [--type f16|q8_0|f32|orig] [--alignment N]

PACKAGE_DIR holds config.json, tokenizer.model, model.safetensors (F32, F16 or
BF16 floats; I64 counters) and usually generation_config.json.

Tensor types (audio.cpp's rules):
  --type q8_0  float tensors of rank 2 whose name ends in ".weight", whose
               last dim is a multiple of 32 and whose lower-cased name has no
               "embed"/"codebook" -> Q8_0; float tensors whose name has
               "embed"/"codebook" -> F16; everything else keeps its dtype.
  --type f16   every float tensor of rank >= 1 -> F16 (norms and biases too;
               f16 is exact enough for them and halves the file); float
               scalars (rank 0) keep their dtype.
  --type f32   as f16, to F32.
  --type orig  every tensor keeps its source dtype.
  I64 tensors always stay I64. The default is f16.
Q8_0 is ggml's reference quantizer: per block of 32 along the last dim,
d = max|x| / 127 (f32), q = roundf(x * (1/d)) (half away from zero), d stored
as f16; F32->F16 rounds to nearest even.

File layout (GGUF v3, little-endian; ggml docs/gguf.md):
  KVs, in this order: general.architecture = "audiocpp", general.name = the
  package folder name, [general.alignment UINT32, only when not 32],
  audiocpp.tensor_name_format = "native", audiocpp.source_format =
  ".safetensors", audiocpp.weight_type = the --type, audiocpp.tensor_sources
  .names = [""] / .paths = ["model.safetensors"] (STRING arrays),
  audiocpp.embedded_files.names (STRING array: every non-weight file of the
  package, relative paths, sorted), .offsets (UINT64 array, n+1 cumulative
  offsets from 0), .data (UINT8 array, the files back to back),
  audiocpp.tensor_names (STRING array, logical names in tensor order),
  audiocpp.tensor_ranks (INT32 array), audiocpp.tensor_shapes (INT64 array,
  the PyTorch shapes concatenated).
  Tensor infos in safetensors header order: the physical name is the logical
  one, or "_audiocpp.<index>" when that is >= 64 bytes (ggml's GGML_MAX_NAME)
  or already taken; dims are the reversed shape ([1] for a scalar); ggml type
  F32 0 / F16 1 / Q8_0 8 / I64 27 / BF16 30; offsets relative to the data
  section, each tensor padded to the alignment (default 32).
Not written: audio.cpp's audiocpp.model_spec.* KVs (its own model registry).
"""
import argparse
import json
import os
import struct
import sys

import numpy as np

GGML_MAX_NAME = 64
MAX_SIDECAR = 64 << 20
WEIGHT_EXTS = (".safetensors", ".gguf", ".bin", ".pt", ".pth")

# GGUF value types and ggml tensor types
U8, I32, U32, STRING, ARRAY, U64, I64 = 0, 5, 4, 8, 9, 10, 11
GGML = {"F32": 0, "F16": 1, "Q8_0": 8, "I64": 27, "BF16": 30}
SRC_DTYPES = {"F32": "<f4", "F16": "<f2", "BF16": "<u2", "I64": "<i8"}
FLOATS = ("F32", "F16", "BF16")
Q8_BLOCK = np.dtype([("d", "<f2"), ("qs", "i1", (32,))])


def read_safetensors(path):
    """[(name, dtype, shape, raw numpy view)] in header order."""
    raw = np.memmap(path, dtype=np.uint8, mode="r")
    hlen = int(struct.unpack("<Q", bytes(raw[:8]))[0])
    header = json.loads(bytes(raw[8:8 + hlen]))
    base = 8 + hlen
    out = []
    for name, d in header.items():
        if name == "__metadata__":
            continue
        if d["dtype"] not in SRC_DTYPES:
            sys.exit(f"{path}: tensor '{name}': dtype {d['dtype']} is not supported (F32, F16, BF16, I64)")
        b, e = d["data_offsets"]
        arr = raw[base + b:base + e].view(SRC_DTYPES[d["dtype"]])
        out.append((name, d["dtype"], [int(x) for x in d["shape"]], arr))
    return out


def out_type(name, shape, src, want):
    if src not in FLOATS or want == "orig":
        return src
    lookup = "embed" in name.lower() or "codebook" in name.lower()
    if want == "q8_0":
        if name.endswith(".weight") and len(shape) == 2 and not lookup and shape[-1] % 32 == 0:
            return "Q8_0"
        return "F16" if lookup else src
    return want.upper() if shape else src


def nbytes(dtype, numel):
    return numel // 32 * 34 if dtype == "Q8_0" else numel * {"F32": 4, "F16": 2, "BF16": 2, "I64": 8}[dtype]


def to_f32(src, arr):
    if src == "BF16":
        return (arr.astype(np.uint32) << 16).view(np.float32)
    return arr.astype(np.float32)


def quantize_q8_0(x):
    """ggml's quantize_row_q8_0_ref over the flat f32 array X (size % 32 == 0)."""
    x = x.reshape(-1, 32)
    d = np.abs(x).max(axis=1) / np.float32(127)
    inv = np.zeros_like(d)
    np.divide(np.float32(1), d, out=inv, where=d != 0)
    v = (x * inv[:, None]).astype(np.float64)  # the f32 product; f64 makes +0.5 exact
    q = np.sign(v) * np.floor(np.abs(v) + 0.5)
    blocks = np.empty(len(x), dtype=Q8_BLOCK)
    blocks["d"] = d.astype(np.float16)
    blocks["qs"] = q.astype(np.int8)
    return blocks


def convert(src, dst, arr):
    if src == dst:
        return arr
    x = to_f32(src, arr)
    if dst == "F32":
        return x
    if dst == "F16":
        return x.astype(np.float16)
    assert dst == "Q8_0"
    return quantize_q8_0(x)


def gstr(s):
    b = s.encode("utf-8")
    return struct.pack("<Q", len(b)) + b


def kv_str(key, value):
    return gstr(key) + struct.pack("<I", STRING) + gstr(value)


def kv_u32(key, value):
    return gstr(key) + struct.pack("<II", U32, value)


def kv_array(key, etype, values):
    if etype == STRING:
        body = b"".join(gstr(v) for v in values)
    elif etype == U8:
        body = bytes(values)
    else:
        body = np.asarray(values, dtype={I32: "<i4", I64: "<i8", U64: "<u8"}[etype]).tobytes()
    return gstr(key) + struct.pack("<IIQ", ARRAY, etype, len(values)) + body


def sidecars(package, out_path):
    """Every non-weight file of the package (as audio.cpp embeds them)."""
    found = []
    for root, dirs, files in os.walk(package):
        dirs[:] = sorted(d for d in dirs if d not in (".cache", ".git"))
        for f in files:
            path = os.path.join(root, f)
            if (f.lower().endswith(WEIGHT_EXTS) or os.path.abspath(path) == os.path.abspath(out_path)
                    or os.path.getsize(path) > MAX_SIDECAR or not os.path.isfile(path)):
                continue
            found.append(os.path.relpath(path, package).replace(os.sep, "/"))
    return sorted(found, key=lambda p: p.split("/"))


def pad(n, a):
    return (n + a - 1) // a * a


def pack(package, out_path, want, alignment):
    for need in ("config.json", "tokenizer.model", "model.safetensors"):
        if not os.path.isfile(os.path.join(package, need)):
            sys.exit(f"{package}: no {need}")
    tensors = read_safetensors(os.path.join(package, "model.safetensors"))
    files = sidecars(package, out_path)
    blobs = []
    for f in files:
        with open(os.path.join(package, f), "rb") as fh:
            blobs.append(fh.read())
    offsets = [0]
    for b in blobs:
        offsets.append(offsets[-1] + len(b))

    kvs = [kv_str("general.architecture", "audiocpp"),
           kv_str("general.name", os.path.basename(os.path.normpath(package)))]
    if alignment != 32:
        kvs.append(kv_u32("general.alignment", alignment))
    kvs += [kv_str("audiocpp.tensor_name_format", "native"),
            kv_str("audiocpp.source_format", ".safetensors"),
            kv_str("audiocpp.weight_type", want),
            kv_array("audiocpp.tensor_sources.names", STRING, [""]),
            kv_array("audiocpp.tensor_sources.paths", STRING, ["model.safetensors"]),
            kv_array("audiocpp.embedded_files.names", STRING, files),
            kv_array("audiocpp.embedded_files.offsets", U64, offsets),
            kv_array("audiocpp.embedded_files.data", U8, b"".join(blobs)),
            kv_array("audiocpp.tensor_names", STRING, [t[0] for t in tensors]),
            kv_array("audiocpp.tensor_ranks", I32, [len(t[2]) for t in tensors]),
            kv_array("audiocpp.tensor_shapes", I64, [d for t in tensors for d in t[2]])]

    infos, plan, taken, offset = [], [], set(), 0
    for i, (name, src, shape, arr) in enumerate(tensors):
        dst = out_type(name, shape, src, want)
        physical = name
        if len(name.encode("utf-8")) >= GGML_MAX_NAME or name in taken:
            physical = f"_audiocpp.{i}"
        if physical in taken:
            sys.exit(f"cannot make a unique GGUF name for '{name}'")
        taken.add(physical)
        dims = list(reversed(shape)) or [1]
        infos.append(gstr(physical) + struct.pack("<I", len(dims)) + struct.pack(f"<{len(dims)}Q", *dims)
                     + struct.pack("<IQ", GGML[dst], offset))
        size = nbytes(dst, int(np.prod(shape, dtype=np.int64)) if shape else 1)
        plan.append((src, dst, arr, size))
        offset += pad(size, alignment)

    header = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kvs)) + b"".join(kvs) + b"".join(infos)
    tmp = out_path + ".tmp"
    with open(tmp, "wb") as out:
        out.write(header + b"\0" * (pad(len(header), alignment) - len(header)))
        for src, dst, arr, size in plan:
            data = convert(src, dst, arr).tobytes()
            assert len(data) == size
            out.write(data + b"\0" * (pad(size, alignment) - size))
    os.replace(tmp, out_path)
    counts = {}
    for _, dst, _, _ in plan:
        counts[dst] = counts.get(dst, 0) + 1
    print(f"{out_path}: {len(tensors)} tensors ({', '.join(f'{n} {k}' for k, n in sorted(counts.items()))}), "
          f"{len(files)} embedded files, {os.path.getsize(out_path)} bytes", file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("package")
    ap.add_argument("out")
    ap.add_argument("--type", default="f16", choices=["f16", "q8_0", "f32", "orig"])
    ap.add_argument("--alignment", type=int, default=32, help="data alignment, a power of two (default 32)")
    a = ap.parse_args()
    if a.alignment <= 0 or a.alignment & (a.alignment - 1):
        sys.exit("--alignment must be a power of two")
    pack(a.package, a.out, a.type, a.alignment)


if __name__ == "__main__":
    main()
