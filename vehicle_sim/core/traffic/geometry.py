"""Centre-line geometry: lines and arcs sampled into polylines, offsets, junction fillets.

A path is sampled as arrays (x, y, heading, s, curvature) in the map frame [m, rad, 1/m]. Arcs are
sampled every ``MAX_DTHETA_RAD`` of turn so the chord error stays below R(1 - cos(dtheta/2)).
"""
from __future__ import annotations

import math

import numpy as np

MAX_STEP_M = 5.0  # straight lines are exact; the step only bounds the projection search cost
MAX_DTHETA_RAD = 0.08  # chord error < 1 mm per metre of radius (R (1 - cos 0.04))


def sample_pieces(x0: float, y0: float, h0: float,
                  pieces: list[tuple[float, float]]) -> np.ndarray:
    """Sample (length_m, curvature_1pm) pieces from a start pose; returns (n, 5) x, y, h, s, k."""
    rows = [(x0, y0, h0, 0.0, pieces[0][1])]
    x, y, h, s = x0, y0, h0, 0.0
    for length, k in pieces:
        n = max(1, math.ceil(length / MAX_STEP_M), math.ceil(abs(k) * length / MAX_DTHETA_RAD))
        ds = length / n
        for _ in range(n):
            if abs(k) < 1e-9:
                x, y = x + ds * math.cos(h), y + ds * math.sin(h)
            else:
                h1 = h + k * ds
                x, y = x + (math.sin(h1) - math.sin(h)) / k, y - (math.cos(h1) - math.cos(h)) / k
                h = h1
            s += ds
            rows.append((x, y, h, s, k))
    return np.array(rows, dtype=np.float64)


def offset_path(ref: np.ndarray, offset_m: float, backward: bool) -> np.ndarray:
    """Lane centre line: ``ref`` shifted ``offset_m`` to its left, reversed if ``backward``."""
    x = ref[:, 0] - offset_m * np.sin(ref[:, 2])
    y = ref[:, 1] + offset_m * np.cos(ref[:, 2])
    h = ref[:, 2].copy()
    k = ref[:, 4] / np.maximum(1e-9, 1.0 - ref[:, 4] * offset_m) * (np.abs(ref[:, 4]) > 1e-12)
    if backward:
        x, y, h, k = x[::-1], y[::-1], h[::-1] + math.pi, -k[::-1]
    seg = np.hypot(np.diff(x), np.diff(y))
    s = np.concatenate(([0.0], np.cumsum(seg)))
    return np.column_stack((x, y, np.arctan2(np.sin(h), np.cos(h)), s, k))


def fillet(p0: tuple[float, float, float], p1: tuple[float, float, float]
           ) -> list[tuple[float, float]] | None:
    """Line-arc-line pieces from pose p0 (x, y, h) to pose p1, tangent at both ends.

    Straight if headings agree and p1 lies on p0's line; otherwise the tangent lines meet at a
    corner C and the arc radius is the largest that fits: r = min(|C-p0|, |C-p1|) / tan(theta/2).
    Returns None when no such path exists (U-turn, lines not meeting ahead).
    """
    x0, y0, h0 = p0
    x1, y1, h1 = p1
    theta = math.atan2(math.sin(h1 - h0), math.cos(h1 - h0))
    dx, dy = x1 - x0, y1 - y0
    c0, s0 = math.cos(h0), math.sin(h0)
    if abs(theta) < 1e-3:
        along, lat = dx * c0 + dy * s0, -dx * s0 + dy * c0
        return [(along, 0.0)] if along > 0 and abs(lat) < 0.05 else None
    if abs(theta) > math.radians(170.0):
        return None
    c1, s1 = math.cos(h1), math.sin(h1)
    den = c0 * s1 - s0 * c1  # solve p0 + a d0 = p1 - b d1
    a = (dx * s1 - dy * c1) / den
    b = (c0 * dy - s0 * dx) / den
    if a <= 0 or b <= 0:
        return None
    t = min(a, b)
    r = t / math.tan(abs(theta) / 2.0)
    pieces = []
    if a - t > 1e-6:
        pieces.append((a - t, 0.0))
    pieces.append((r * abs(theta), math.copysign(1.0 / r, theta)))
    if b - t > 1e-6:
        pieces.append((b - t, 0.0))
    return pieces


def conflict_range(pa: np.ndarray, pb: np.ndarray, clearance_m: float
                   ) -> tuple[float, float, float, float] | None:
    """Arc-length ranges [sa_in, sa_out], [sb_in, sb_out] where two paths are closer than
    ``clearance_m`` (densely resampled), or None if they never are."""
    a, b = resample(pa, 0.5), resample(pb, 0.5)
    d = np.hypot(a[:, None, 0] - b[None, :, 0], a[:, None, 1] - b[None, :, 1])
    close = d < clearance_m
    if not close.any():
        return None
    ia = np.nonzero(close.any(axis=1))[0]
    ib = np.nonzero(close.any(axis=0))[0]
    return a[ia[0], 3], a[ia[-1], 3], b[ib[0], 3], b[ib[-1], 3]


def resample(path: np.ndarray, step_m: float) -> np.ndarray:
    """Linear resampling of a sampled path (x, y, h, s) every ``step_m`` metres."""
    s = np.arange(0.0, path[-1, 3] + 1e-9, step_m)
    s = np.append(s, path[-1, 3]) if s[-1] < path[-1, 3] - 1e-9 else s
    return np.column_stack([np.interp(s, path[:, 3], path[:, i]) for i in (0, 1)] +
                           [np.zeros_like(s), s])
