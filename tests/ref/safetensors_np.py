#!/usr/bin/python3
"""Minimal safetensors reader: JSON header + numpy views, no extra packages."""
import json
import struct

import numpy as np

# Little-endian storage types. BF16 has no numpy dtype: read as uint16, widen below.
_DTYPES = {"F32": "<f4", "F16": "<f2", "BF16": "<u2", "I64": "<i8"}


def load(path):
    """Return {name: np.ndarray} (writable, native-endian copies) for every tensor."""
    with open(path, "rb") as f:
        blob = f.read()
    (hlen,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + hlen].decode("utf-8"))
    base = 8 + hlen
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        if info["dtype"] not in _DTYPES:
            raise ValueError(f"{path}: tensor '{name}' has unsupported dtype {info['dtype']}")
        dt = np.dtype(_DTYPES[info["dtype"]])
        begin, end = info["data_offsets"]
        raw = np.frombuffer(blob, dtype=dt, count=(end - begin) // dt.itemsize,
                            offset=base + begin)
        if info["dtype"] == "BF16":
            arr = (raw.astype(np.uint32) << 16).view(np.float32)
        else:
            arr = raw.astype(dt.newbyteorder("="))  # astype copies: writable
        out[name] = arr.reshape(info["shape"])
    return out
