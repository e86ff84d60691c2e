"""tensor/quant's rows (through tests/drivers/test_quant_rows.c) against the
numpy oracle tests/ref/kquant_ref.py, written from the block layouts:

- dequantization of random blocks (every bit pattern of the quantized
  fields, random finite f16 scales, negative Q6_K scales): bit-identical
  for Q8_0, Q4_K and Q6_K;
- quantization of Gaussian rows whose sub-blocks differ in scale (some all
  zero, some all negative, one outlier, a block of exact halves that Q8_0
  rounds to even): the C blocks are byte-identical to
  the oracle's quantizer and every value within the rule's bound
  (kquant_ref.bound); the RMS error over the row's RMS is printed.
Runs in about a second."""
import os
import subprocess

import numpy as np
import pytest

import kquant_ref as kq
import testenv

WORK = testenv.work("kquant")
KINDS = ["q8_0", "q4_k", "q6_k"]
N = 256 * 64


@pytest.fixture(scope="module")
def rows(driver):
    exe = driver("test_quant_rows")

    def run(mode, kind, n, data):
        src, dst = os.path.join(WORK, f"{mode}_{kind}.in"), os.path.join(WORK, f"{mode}_{kind}.out")
        with open(src, "wb") as f:
            f.write(data)
        p = subprocess.run([exe, mode, kind, str(n), src, dst], capture_output=True, text=True)
        assert p.returncode == 0, f"{mode} {kind}: {p.stderr}"
        with open(dst, "rb") as f:
            return f.read()
    return run


def random_blocks(kind, nb, rng):
    dt, _ = kq.BLOCKS[kind]
    raw = rng.integers(0, 256, nb * dt.itemsize, dtype=np.uint8)
    b = np.frombuffer(raw.tobytes(), dtype=dt).copy()
    for f in ("d", "dmin"):
        if f in dt.names:  # finite f16 of both signs over many octaves
            b[f] = (rng.uniform(-1, 1, nb) * 2.0 ** rng.integers(-20, 8, nb)).astype(np.float16)
    return b.tobytes()


@pytest.mark.parametrize("kind", KINDS)
def test_dequantize(kind, rows):
    """Random blocks dequantize to the oracle's values bit for bit."""
    rng = np.random.default_rng(1)
    raw = random_blocks(kind, N // kq.BLOCKS[kind][1], rng)
    got = np.frombuffer(rows("dequant", kind, N, raw), "<f4")
    want = kq.dequantize(kind, raw)
    diff = np.flatnonzero(got.view(np.uint32) != want.view(np.uint32))
    assert diff.size == 0, f"{kind}: {diff.size} values differ, first at {diff[0]}: {got[diff[0]]} vs {want[diff[0]]}"


def make_rows(rng=np.random.default_rng(2)):
    """Rows whose sub-blocks of 16 have scales over 4 decades, some zero, some negative-only."""
    x = rng.standard_normal(N).astype(np.float32)
    x *= np.repeat(10.0 ** rng.uniform(-3, 1, N // 16), 16).astype(np.float32)
    x[:256] = 0                                   # an all-zero block
    x[256:512] = -np.abs(x[256:512])              # a block of negatives only
    x[1000] = 50                                  # an outlier
    x[2048:2080] = np.arange(32) - 15.5           # Q8_0: a block of halves (-15.5 .. 15.5)
    x[2048] = 127                                 # d = 1: the halves are ties, rounded to even
    return x


@pytest.mark.parametrize("kind", KINDS)
def test_quantize(kind, rows):
    """C blocks equal the oracle quantizer's; each value within the rule's bound."""
    x = make_rows()
    got = rows("quant", kind, N, x.tobytes())
    want = kq.quantize(kind, x)
    bad = np.flatnonzero(np.frombuffer(got, np.uint8) != np.frombuffer(want, np.uint8))
    assert bad.size == 0, f"{kind}: {bad.size} bytes differ from the oracle's, first at {bad[0]}"
    y = kq.dequantize(kind, got).astype(np.float64)
    err = np.abs(y - x)
    lim = kq.bound(kind, got) + 1e-12
    worst = int(np.argmax(err / lim))
    rms = float(np.sqrt(np.mean(err ** 2)) / np.sqrt(np.mean(x.astype(np.float64) ** 2)))
    print(f"{kind}: RMS error / RMS {rms:.2e}, worst error {err[worst]:.3g} of bound {lim[worst]:.3g}")
    assert np.all(err <= lim), f"{kind}: value {worst} = {x[worst]} comes back as {y[worst]} (bound {lim[worst]:.3g})"
    assert np.all(y[:256] == 0), f"{kind}: the zero block does not come back as zeros"
