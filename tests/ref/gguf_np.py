"""A GGUF writer for the tests' generators, in the layout the ggml audio
runtime's converter writes (GGUF v3, little-endian; see src/io/gguf.c for
the keys): general.architecture "audiocpp", audiocpp.weight_type,
audiocpp.tensor_sources.names/.paths, the optional embedded package
description (audiocpp.model_spec.version/family/json), the embedded files
(audiocpp.embedded_files.names/.offsets/.data), and the logical names and
PyTorch shapes (audiocpp.tensor_names/_ranks/_shapes). A tensor of a part
is named "<namespace>/<name>". Quantized types come from kquant_ref.

write(path, tensors, files, kind, ...) with tensors a list of (logical name,
numpy array: float32 or float16 values, int64 counters) and files a list of
(relative name, bytes).

read(path) is the reader of the same layout, written from the GGUF spec
(ggml docs/gguf.md) apart from the C reader: the KVs, the embedded files,
and per tensor its logical name, ggml type name, exact shape and raw bytes
(values(t) widens a float or quantized tensor to float32)."""
import struct

import numpy as np

import kquant_ref as kq

U8, I32, U32, STRING, ARRAY, U64, I64 = 0, 5, 4, 8, 9, 10, 11
GGML = {"F32": 0, "F16": 1, "Q8_0": 8, "Q2_K": 10, "Q3_K": 11, "Q4_K": 12, "Q5_K": 13, "Q6_K": 14, "I64": 27, "BF16": 30}
BLOCK = {"Q8_0": 32, "Q4_K": 256, "Q6_K": 256}
ALIGN = 32


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


def pick(name, shape, kind):
    """The ggml audio runtime converter's rule: rank-2 '.weight' tensors
    whose last dim is a multiple of the block and whose name has no 'embed'/'codebook' take KIND;
    'embed'/'codebook' tensors become F16 under a quantized KIND; F32/F16 kinds apply to all."""
    if kind in ("F32", "F16", "BF16", "orig"):
        return "F32" if kind == "orig" else kind
    lookup = "embed" in name.lower() or "codebook" in name.lower()
    if name.endswith(".weight") and len(shape) == 2 and not lookup and shape[-1] % BLOCK[kind] == 0:
        return kind
    return "F16" if lookup else "F32"


def encode(x, dtype):
    x = np.asarray(x)
    if dtype == "I64":
        return x.astype("<i8").tobytes()
    if dtype == "F32":
        return x.astype("<f4").tobytes()
    if dtype == "F16":
        return x.astype("<f2").tobytes()
    if dtype == "BF16":  # round to nearest even on the f32 bits
        b = x.astype("<f4").view(np.uint32).astype(np.uint64)
        return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype("<u2").tobytes()
    return kq.quantize(dtype.lower(), x.astype(np.float32).reshape(-1))


def write(path, tensors, files=(), kind="F32", sources=(("", "model.safetensors"),), spec=None, types=None,
          raw=None):
    """KIND: the weight type the file says (audiocpp.weight_type) and, through pick, each tensor's;
    TYPES: {name: dtype} overrides the rule; RAW: {name: bytes} replaces a tensor's data (malformed files)."""
    types, raw = types or {}, raw or {}
    kvs = [kv_str("general.architecture", "audiocpp"), kv_str("general.name", "tiny"),
           kv_str("audiocpp.tensor_name_format", "native"), kv_str("audiocpp.weight_type", kind.lower()),
           kv_array("audiocpp.tensor_sources.names", STRING, [s[0] for s in sources]),
           kv_array("audiocpp.tensor_sources.paths", STRING, [s[1] for s in sources])]
    if spec is not None:
        family, text = spec
        kvs += [kv_u32("audiocpp.model_spec.version", 1), kv_str("audiocpp.model_spec.family", family),
                kv_str("audiocpp.model_spec.json", text)]
    if files:
        offsets, data = [0], b""
        for _, body in files:
            data += body
            offsets.append(len(data))
        kvs += [kv_array("audiocpp.embedded_files.names", STRING, [n for n, _ in files]),
                kv_array("audiocpp.embedded_files.offsets", U64, offsets),
                kv_array("audiocpp.embedded_files.data", U8, data)]
    names = [n for n, _ in tensors]
    shapes = [list(np.shape(a)) for _, a in tensors]
    kvs += [kv_array("audiocpp.tensor_names", STRING, names),
            kv_array("audiocpp.tensor_ranks", I32, [len(s) for s in shapes]),
            kv_array("audiocpp.tensor_shapes", I64, [d for s in shapes for d in s])]
    infos, blobs, off = b"", [], 0
    for i, (name, a) in enumerate(tensors):
        dtype = types.get(name) or ("I64" if np.asarray(a).dtype.kind in "iu" else pick(name, np.shape(a), kind))
        blob = raw[name] if name in raw else encode(a, dtype)
        phys = name if len(name.encode()) < 64 else f"_audiocpp.{i}"
        dims = list(reversed(np.shape(a))) or [1]
        infos += gstr(phys) + struct.pack("<I", len(dims)) + struct.pack(f"<{len(dims)}Q", *dims)
        infos += struct.pack("<IQ", GGML[dtype], off)
        blobs.append(blob)
        off += (len(blob) + ALIGN - 1) // ALIGN * ALIGN
    head = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kvs)) + b"".join(kvs) + infos
    head += b"\0" * (-len(head) % ALIGN)
    with open(path, "wb") as f:
        f.write(head)
        for blob in blobs:
            f.write(blob + b"\0" * (-len(blob) % ALIGN))
    return path


TYPE_NAME = {v: k for k, v in GGML.items()}
_SCALAR = {0: "<u1", 1: "<i1", 2: "<u2", 3: "<i2", 4: "<u4", 5: "<i4", 6: "<f4", 7: "<u1", 10: "<u8", 11: "<i8",
           12: "<f8"}
BYTES = {"F32": (4, 1), "F16": (2, 1), "BF16": (2, 1), "I64": (8, 1), "Q8_0": (34, 32), "Q4_K": (144, 256),
         "Q6_K": (210, 256)}


class _Cursor:
    def __init__(self, buf):
        self.buf, self.pos = buf, 0

    def take(self, fmt):
        v = struct.unpack_from(fmt, self.buf, self.pos)
        self.pos += struct.calcsize(fmt)
        return v[0] if len(v) == 1 else v

    def string(self):
        n = self.take("<Q")
        s = self.buf[self.pos:self.pos + n].decode("utf-8")
        self.pos += n
        return s

    def value(self, t):
        if t == STRING:
            return self.string()
        if t == ARRAY:
            et, n = self.take("<IQ")
            if et == STRING:
                return [self.string() for _ in range(n)]
            a = np.frombuffer(self.buf, _SCALAR[et], n, self.pos)
            self.pos += a.nbytes
            return a
        a = np.frombuffer(self.buf, _SCALAR[t], 1, self.pos)
        self.pos += a.nbytes
        return a[0].item()


def _header(buf, path):
    """(version, kv, [(physical name, dims, type name, offset)], the data's base offset) of a GGUF in BUF"""
    c = _Cursor(buf)
    assert c.take("4s") == b"GGUF", f"{path}: not GGUF"
    version, n_t, n_kv = c.take("<IQQ")
    kv = {}
    for _ in range(n_kv):
        key = c.string()
        kv[key] = c.value(c.take("<I"))
    infos = []
    for _ in range(n_t):
        name = c.string()
        nd = c.take("<I")
        dims = [c.take("<Q") for _ in range(nd)]
        t, off = c.take("<IQ")
        infos.append((name, dims, TYPE_NAME[t], off))
    align = kv.get("general.alignment", ALIGN)
    return version, kv, infos, (c.pos + align - 1) // align * align


def read(path):
    """{"version", "kv": {key: value}, "files": {name: bytes}, "tensors": [dict(name, physical, type, shape,
    data)]}: names and shapes from audiocpp.tensor_names/_shapes when present (checked against the ggml
    dims), data the tensor's bytes."""
    buf = open(path, "rb").read()
    version, kv, infos, base = _header(buf, path)
    align = kv.get("general.alignment", ALIGN)
    names = kv.get("audiocpp.tensor_names")
    ranks = kv.get("audiocpp.tensor_ranks")
    flat = list(kv.get("audiocpp.tensor_shapes", []))
    tensors, used = [], 0
    for i, (phys, dims, t, off) in enumerate(infos):
        if ranks is not None:
            shape = [int(d) for d in flat[used:used + int(ranks[i])]]
            used += int(ranks[i])
            assert list(reversed(shape)) + [1] * (len(dims) - len(shape)) == dims + [1] * (len(shape) - len(dims)) \
                or (not shape and dims == [1]), f"{path}: tensor {i}: dims {dims} against shape {shape}"
        else:
            shape = list(reversed(dims))
        n = int(np.prod(shape, dtype=np.int64)) if shape else 1
        size, block = BYTES[t]
        assert n % block == 0, f"{path}: tensor {phys}: {n} values are not whole {t} blocks"
        data = buf[base + off:base + off + n // block * size]
        assert off % align == 0 and len(data) == n // block * size, f"{path}: tensor {phys}: data out of the file"
        tensors.append({"name": names[i] if names is not None else phys, "physical": phys, "type": t,
                        "shape": shape, "data": data})
    files = {}
    if "audiocpp.embedded_files.names" in kv:
        offs = kv["audiocpp.embedded_files.offsets"]
        blob = kv["audiocpp.embedded_files.data"].tobytes()
        for i, name in enumerate(kv["audiocpp.embedded_files.names"]):
            files[name] = blob[int(offs[i]):int(offs[i + 1])]
    return {"version": version, "kv": kv, "files": files, "tensors": tensors}


def tensor_bytes(path):
    """{logical name: bytes of its data} of the GGUF at PATH, from its header only (the file is mapped, not
    read: a full-size package is gigabytes)"""
    import mmap
    with open(path, "rb") as f:   # the header's arrays point into the map: it closes when they are gone
        _, kv, infos, _ = _header(mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ), path)
    names = kv.get("audiocpp.tensor_names")
    out = {}
    for i, (phys, dims, t, _) in enumerate(infos):
        size, block = BYTES[t]
        out[names[i] if names is not None else phys] = int(np.prod(dims, dtype=np.int64)) // block * size
    return out


def values(t):
    """Tensor T of read() as float32 values in its shape."""
    raw, kind = t["data"], t["type"]
    if kind == "F32":
        a = np.frombuffer(raw, "<f4")
    elif kind == "F16":
        a = np.frombuffer(raw, "<f2").astype(np.float32)
    elif kind == "BF16":
        a = (np.frombuffer(raw, "<u2").astype(np.uint32) << 16).view(np.float32)
    elif kind == "I64":
        return np.frombuffer(raw, "<i8").reshape(t["shape"])
    else:
        a = kq.dequantize(kind.lower(), raw)
    return a.reshape(t["shape"])
