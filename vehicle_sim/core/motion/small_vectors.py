"""Clamp and cross product for the platform loop's 3- and 6-vectors, at a fraction of numpy's
``clip`` and ``cross`` (whose argument handling costs ~3 and ~15 us a call: a 500 Hz loop makes
a dozen such calls per frame). The same arithmetic in the same order, so the same values (a
value equal to a zero bound may come out +0 where ``np.clip`` keeps -0)."""
from __future__ import annotations

import numpy as np


def clamp(x, lower, upper) -> np.ndarray:
    """``np.clip(x, lower, upper)``: NaN stays NaN."""
    return np.minimum(np.maximum(x, lower), upper)


def cross3(a, b) -> np.ndarray:
    """``np.cross(a, b)`` of two 3-vectors."""
    a0, a1, a2 = float(a[0]), float(a[1]), float(a[2])
    b0, b1, b2 = float(b[0]), float(b[1]), float(b[2])
    return np.array((a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0))
