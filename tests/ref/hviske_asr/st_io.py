#!/usr/bin/python3
"""safetensors read/write with numpy only (F32/F16/BF16/I64).

Layout: u64 little-endian header length, JSON header {name: {dtype, shape,
data_offsets}} (+ optional "__metadata__" of str->str), header padded with
spaces to a multiple of 8, then the tensor bytes back to back in header order.
BF16 has no numpy dtype: it is carried as uint16 bit patterns here.
"""
import json
import struct

import numpy as np

_STORE = {"F32": "<f4", "F16": "<f2", "BF16": "<u2", "I64": "<i8"}
# Order like the reference safetensors writer (dtype descending, then name):
# wide types first, so every tensor stays aligned to its element size.
_RANK = {"I64": 0, "F32": 1, "BF16": 2, "F16": 3}


def f32_to_bf16_bits(x):
    """float32 -> bf16 bit patterns (uint16), round to nearest even like torch."""
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    nan = np.isnan(np.asarray(x, dtype=np.float32))
    rounded[nan] = 0x7FC0  # keep NaN a quiet NaN instead of rounding into inf
    return rounded


def bf16_bits_to_f32(bits):
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


def load(path, with_dtypes=False):
    """Return {name: ndarray} (native-endian copies; BF16 widened to float32).

    With with_dtypes=True return (tensors, {name: file dtype}, metadata)."""
    with open(path, "rb") as f:
        blob = f.read()
    if len(blob) < 8:
        raise ValueError(f"{path}: too short for a safetensors header")
    (hlen,) = struct.unpack("<Q", blob[:8])
    if 8 + hlen > len(blob):
        raise ValueError(f"{path}: header length {hlen} runs past the file end")
    header = json.loads(blob[8:8 + hlen].decode("utf-8"))
    base = 8 + hlen
    out, dtypes = {}, {}
    meta = header.pop("__metadata__", None)
    for name, info in header.items():
        dt_name = info["dtype"]
        if dt_name not in _STORE:
            raise ValueError(f"{path}: tensor '{name}' has unsupported dtype {dt_name}")
        dt = np.dtype(_STORE[dt_name])
        begin, end = info["data_offsets"]
        shape = [int(s) for s in info["shape"]]
        count = int(np.prod(shape)) if shape else 1
        if end - begin != count * dt.itemsize or base + end > len(blob):
            raise ValueError(f"{path}: tensor '{name}' has bad data_offsets {info['data_offsets']}")
        raw = np.frombuffer(blob, dtype=dt, count=count, offset=base + begin)
        arr = bf16_bits_to_f32(raw) if dt_name == "BF16" else raw.astype(dt.newbyteorder("="))
        out[name] = arr.reshape(shape)
        dtypes[name] = dt_name
    if with_dtypes:
        return out, dtypes, meta
    return out


def save(path, tensors, metadata=None):
    """Write {name: (dtype_name, ndarray)} or {name: ndarray} (dtype from numpy).

    For BF16 pass ("BF16", float array): it is rounded to nearest even here."""
    items = []
    for name, val in tensors.items():
        if isinstance(val, tuple):
            dt_name, arr = val
        else:
            arr = np.asarray(val)
            dt_name = {np.dtype(np.float32): "F32", np.dtype(np.float16): "F16",
                       np.dtype(np.int64): "I64"}.get(arr.dtype)
            if dt_name is None:
                raise ValueError(f"tensor '{name}': no safetensors dtype for numpy {arr.dtype}")
        if dt_name == "BF16":
            data = f32_to_bf16_bits(arr).astype("<u2")
        else:
            data = np.asarray(arr, dtype=_STORE[dt_name])
        items.append((name, dt_name, list(np.shape(arr)), np.ascontiguousarray(data).tobytes()))
    items.sort(key=lambda it: (_RANK[it[1]], it[0]))

    header = {}
    if metadata:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    offset = 0
    for name, dt_name, shape, data in items:
        header[name] = {"dtype": dt_name, "shape": shape, "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
    hjson = json.dumps(header, separators=(",", ":"), ensure_ascii=True).encode("utf-8")
    hjson += b" " * (-len(hjson) % 8)  # the data start stays 8-byte aligned
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(hjson)))
        f.write(hjson)
        for _, _, _, data in items:
            f.write(data)


def edit(src, dst, drop=None, cut=None):
    """A copy of the file SRC at DST with the tensor DROP left out and CUT one row short (broken
    checkpoints for the bad-input tests)."""
    t = load(src)
    if drop:
        del t[drop]
    if cut:
        t[cut] = t[cut][:-1]
    save(dst, t)
