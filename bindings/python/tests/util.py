"""Helpers shared by the tests."""
import os
import unittest

# The repository root: GUARDJIT_REPO, else three levels above this file.
REPO = os.environ.get("GUARDJIT_REPO") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", "..", ".."))
EXAMPLES = os.path.join(REPO, "examples")

try:
    import numpy as np
except ImportError:  # pragma: no cover
    np = None

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None

needs_numpy = unittest.skipIf(np is None, "numpy is not installed")
needs_torch = unittest.skipIf(torch is None, "torch is not installed")


def max_rel_error(actual, expected):
    """max |actual - expected| / max |expected| (the norm-wise relative error)."""
    actual = np.asarray(actual, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    scale = max(float(np.abs(expected).max()), 1e-30)
    return float(np.abs(actual - expected).max()) / scale
