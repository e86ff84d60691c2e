"""ggml's quantized block layouts in numpy, written from the format facts
(llama.cpp's block_q8_0, block_q4_K, block_q6_K; see src/tensor/quant.h
for the same facts in prose), as the oracle of tensor/quant and as the
quantizer of the tests' GGUF generators.

Q8_0  (34 bytes / 32 values):  f16 d, int8 qs[32];            x = d * q
      (d = amax / 127, q = x * (1/d) rounded to nearest even, as the C
      code does for weights and activations alike; ggml's reference
      rounds halves away from zero: the two differ only at exact ties)
Q4_K  (144 bytes / 256 values): f16 d, f16 dmin, u8 scales[12], u8 qs[128];
      8 sub-blocks of 32 with 6-bit scale sc[j] and min m[j]:
        j < 4:  sc = scales[j] & 63,  m = scales[j+4] & 63
        j >= 4: sc = (scales[j+4] & 15) | (scales[j-4] >> 6) << 4
                m  = (scales[j+4] >> 4) | (scales[j] >> 6) << 4
      sub-block j's 4-bit values are the low (j even) or high (j odd)
      nibbles of qs[32*(j//2) : 32*(j//2)+32];   x = (d*sc) * q - dmin*m
Q6_K  (210 bytes / 256 values): u8 ql[128], u8 qh[64], i8 scales[16], f16 d;
      each half h of 128 values uses ql[64h:64h+64], qh[32h:32h+32]; its
      value l + 32k (l < 32, k < 4) takes the low (k even) or high (k odd)
      nibble of ql[l + 32*(k%2)] and bits 2k, 2k+1 of qh[l];
      x = (d*scales[v//16]) * (q - 32), v the index in the block.
The products are f32 in that order (what the C code computes).

The quantizer (ours, not ggml's search): per sub-block the scale that
covers its range, rounded up to the 6/8-bit grid of the f16 super-block
scale; a value's error is at most half a step of its sub-block (Q4_K: plus
half a step of the mins), which `bound` gives per value.
"""
import numpy as np

QK_K = 256
Q8_0 = np.dtype([("d", "<f2"), ("qs", "i1", (32,))])
Q4_K = np.dtype([("d", "<f2"), ("dmin", "<f2"), ("scales", "u1", (12,)), ("qs", "u1", (128,))])
Q6_K = np.dtype([("ql", "u1", (128,)), ("qh", "u1", (64,)), ("scales", "i1", (16,)), ("d", "<f2")])
BLOCKS = {"q8_0": (Q8_0, 32), "q4_k": (Q4_K, QK_K), "q6_k": (Q6_K, QK_K)}
F32 = np.float32


def q4_k_scales(s):
    """(sc, m) [nb][8] of the scales bytes [nb][12]."""
    s = s.astype(np.int32)
    sc = np.empty((len(s), 8), np.int32)
    m = np.empty((len(s), 8), np.int32)
    sc[:, :4], m[:, :4] = s[:, 0:4] & 63, s[:, 4:8] & 63
    sc[:, 4:] = (s[:, 8:12] & 15) | ((s[:, 0:4] >> 6) << 4)
    m[:, 4:] = (s[:, 8:12] >> 4) | ((s[:, 4:8] >> 6) << 4)
    return sc, m


def dequantize(kind, raw):
    """The f32 values of the blocks of KIND in the bytes RAW."""
    dt, _ = BLOCKS[kind]
    b = np.frombuffer(bytes(raw), dtype=dt)
    if kind == "q8_0":
        return (b["d"].astype(F32)[:, None] * b["qs"].astype(F32)).reshape(-1)
    if kind == "q4_k":
        sc, m = q4_k_scales(b["scales"])
        d, dmin = b["d"].astype(F32)[:, None], b["dmin"].astype(F32)[:, None]
        a, c = d * sc.astype(F32), dmin * m.astype(F32)          # [nb][8]
        qs = b["qs"].reshape(-1, 4, 32)
        q = np.stack([qs & 15, qs >> 4], axis=2).reshape(-1, 8, 32).astype(F32)
        return (a[:, :, None] * q - c[:, :, None]).reshape(-1)
    ql, qh = b["ql"].reshape(-1, 2, 64).astype(np.int32), b["qh"].reshape(-1, 2, 32).astype(np.int32)
    q = np.empty((len(b), 2, 4, 32), np.int32)
    for k in range(4):
        nib = ql[:, :, 32 * (k % 2):32 * (k % 2) + 32]
        nib = nib & 15 if k < 2 else nib >> 4
        q[:, :, k] = nib | (((qh >> (2 * k)) & 3) << 4)
    q = q.reshape(-1, 16, 16) - 32
    a = b["d"].astype(F32)[:, None] * b["scales"].astype(F32)   # [nb][16]
    return (a[:, :, None] * q.astype(F32)).reshape(-1)


def _f16(v):
    return np.asarray(v, F32).astype(np.float16)


def quantize(kind, x):
    """The blocks (bytes) of the f32 values X (len % block == 0) in KIND."""
    dt, n = BLOCKS[kind]
    x = np.asarray(x, F32).reshape(-1, n)
    b = np.zeros(len(x), dtype=dt)
    if kind == "q8_0":
        d = np.abs(x).max(axis=1) / F32(127)
        inv = np.where(d > 0, F32(1) / np.where(d > 0, d, 1), 0).astype(F32)
        b["d"] = _f16(d)
        b["qs"] = np.rint(x * inv[:, None]).astype(np.int8)
        return b.tobytes()
    if kind == "q4_k":
        xs = x.reshape(-1, 8, 32)
        lo, hi = np.minimum(xs.min(axis=2), 0), np.maximum(xs.max(axis=2), 0)
        rng, lift = (hi - lo).astype(F32), np.where(lo < 0, -lo, 0).astype(F32)  # +0, never -0
        d = _f16(rng.max(axis=1) / F32(15 * 63)).astype(F32)[:, None]
        dmin = _f16(lift.max(axis=1) / F32(63)).astype(F32)[:, None]
        with np.errstate(divide="ignore", invalid="ignore"):
            m = np.where(dmin > 0, np.clip(np.rint(lift / dmin), 0, 63), 0).astype(np.int32)
            top = rng - lift + dmin * m.astype(F32)
            sc = np.where(d > 0, np.clip(np.ceil(top / (F32(15) * d)), 0, 63), 0).astype(np.int32)
            step, base = d * sc.astype(F32), dmin * m.astype(F32)
            q = np.where(step[:, :, None] > 0,
                         np.clip(np.rint((xs + base[:, :, None]) / step[:, :, None]), 0, 15), 0).astype(np.uint8)
        b["d"], b["dmin"] = d[:, 0].astype(np.float16), dmin[:, 0].astype(np.float16)
        s = np.zeros((len(x), 12), np.int32)
        s[:, 0:4] = (sc[:, :4] & 63) | ((sc[:, 4:] >> 4) << 6)
        s[:, 4:8] = (m[:, :4] & 63) | ((m[:, 4:] >> 4) << 6)
        s[:, 8:12] = (sc[:, 4:] & 15) | ((m[:, 4:] & 15) << 4)
        b["scales"] = s.astype(np.uint8)
        q = q.reshape(-1, 4, 2, 32)
        b["qs"] = (q[:, :, 0] | (q[:, :, 1] << 4)).reshape(-1, 128)
        return b.tobytes()
    xs = x.reshape(-1, 16, 16)
    amax = np.abs(xs).max(axis=2)
    d = _f16(amax.max(axis=1) / F32(31 * 127)).astype(F32)[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        sc = np.where(d > 0, np.clip(np.ceil(amax / (F32(31) * d)), 0, 127), 0).astype(np.int32)
        step = d * sc.astype(F32)
        q = (np.where(step[:, :, None] > 0, np.clip(np.rint(xs / step[:, :, None]), -32, 31), 0) + 32).astype(np.int32)
    b["d"], b["scales"] = d[:, 0].astype(np.float16), sc.astype(np.int8)
    q = q.reshape(-1, 2, 4, 32)
    ql = np.concatenate([(q[:, :, 0] & 15) | ((q[:, :, 2] & 15) << 4), (q[:, :, 1] & 15) | ((q[:, :, 3] & 15) << 4)],
                        axis=2)
    qh = (q[:, :, 0] >> 4) | ((q[:, :, 1] >> 4) << 2) | ((q[:, :, 2] >> 4) << 4) | ((q[:, :, 3] >> 4) << 6)
    b["ql"], b["qh"] = ql.reshape(-1, 128).astype(np.uint8), qh.reshape(-1, 64).astype(np.uint8)
    return b.tobytes()


def bound(kind, raw):
    """Per value, the largest error the quantizer's rule allows for the blocks RAW it wrote:
    half a step of the value's sub-block (Q4_K: plus half a step of the mins), plus the
    f16 rounding of the super-block scale (at most one step in 2^10 of the range; Q8_0
    rounds q against the unrounded scale, ggml's rule)."""
    dt, _ = BLOCKS[kind]
    b = np.frombuffer(bytes(raw), dtype=dt)
    if kind == "q8_0":
        step = np.repeat(b["d"].astype(np.float64), 32)  # q is rounded against the unrounded d
        return step * (0.5 + 127 * 2.0 ** -10)
    if kind == "q4_k":
        sc, _ = q4_k_scales(b["scales"])
        step = b["d"].astype(np.float64)[:, None] * sc
        extra = 0.5 * b["dmin"].astype(np.float64)[:, None] + step * 15 * 2.0 ** -10
        return np.repeat(0.5 * step + extra, 32, axis=1).reshape(-1)
    step = b["d"].astype(np.float64)[:, None] * b["scales"].astype(np.float64)
    return np.repeat(0.5 * step + step * 32 * 2.0 ** -10, 16, axis=1).reshape(-1)
