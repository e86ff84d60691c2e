"""The parity tests compare with references that compute in f32: their
drivers and commands load every checkpoint with f32 products (BF16 and Q8_0
weights dequantized at load; see test_weight_type in tests/unit/test_util.h),
so a BF16 or Q8_0 checkpoint is checked at the same tolerance as an F32 one.
What each stored type's own arithmetic costs is measured by tests/precision.py
and held by tests/model/test_precision.py."""
import os

import pytest


@pytest.fixture(autouse=True, scope="module")
def f32_products():
    was = os.environ.get("AUDIOC_TEST_WEIGHTS")
    os.environ["AUDIOC_TEST_WEIGHTS"] = "f32"
    yield
    if was is None:
        del os.environ["AUDIOC_TEST_WEIGHTS"]
    else:
        os.environ["AUDIOC_TEST_WEIGHTS"] = was
