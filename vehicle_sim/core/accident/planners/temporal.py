"""Paper 002's temporal planner: time values of the trajectory points (sec. 8).

Time values run from 0 (start) to 1 (end of the scene). Before a vehicle's first collision they
grow in proportion to arc length (constant speed) up to T of that collision; collision i of n
(1-based) is at T_i = T_split + (1 - T_split) / (n - 1) (i - 1) (002 Eq. 1). For n = 1 the
formula is undefined: here T_1 = T_split (a choice: the time after the single collision is left
to the crash response, and the hold point below keeps the plan defined up to 1). A vehicle whose
last point comes before 1 (it misses the last collision, or n = 1) gets a stop point: the same
coordinates at time 1 (002 sec. 8.4). A vehicle in no collision spreads its whole polyline over
[0, 1]. The scale to seconds: the fastest vehicle before its first collision drives at the
template's ``speed_mps``.
"""
from __future__ import annotations

import numpy as np


def collision_time(i: int, n: int, t_split: float) -> float:
    """T of collision i (0-based) of n; 002 Eq. 1, T_split for n = 1."""
    if n <= 1:
        return t_split
    return t_split + (1.0 - t_split) / (n - 1) * i


def time_values(points: np.ndarray, tags: list[int], n: int, t_split: float
                ) -> tuple[np.ndarray, np.ndarray]:
    """(time values, points) of one vehicle: tags -1 for a normal point, k for collision k."""
    tags = list(tags)
    pts = [np.asarray(q, dtype=float) for q in points]
    first = next((k for k, tag in enumerate(tags) if tag >= 0), None)
    end = first if first is not None else len(pts) - 1
    t_end = collision_time(tags[first], n, t_split) if first is not None else 1.0
    head = _drop_repeats(pts[:end]) + [pts[end]]
    seg = np.array([np.linalg.norm(b - a) for a, b in zip(head[:-1], head[1:], strict=True)])
    total = float(seg.sum())
    if total > 0.0:
        times = list(t_end * np.concatenate([[0.0], np.cumsum(seg)]) / total)
    else:  # standing until its first collision
        head = [head[0], head[-1]]
        times = [0.0, t_end]
    out_pts = head
    for k in range(end + 1, len(pts)):
        out_pts.append(pts[k])
        times.append(collision_time(tags[k], n, t_split))
    if times[-1] < 1.0 - 1e-12:
        out_pts.append(out_pts[-1].copy())
        times.append(1.0)
    return np.array(times), np.array(out_pts)


def _drop_repeats(pts: list[np.ndarray]) -> list[np.ndarray]:
    out: list[np.ndarray] = []
    for q in pts:
        if not out or np.linalg.norm(q - out[-1]) > 1e-9:
            out.append(q)
    return out


def first_part(times: np.ndarray, points: np.ndarray, tags_first: float) -> tuple[float, float]:
    """(arc length [m], time value) up to the point with time value ``tags_first``."""
    k = int(np.searchsorted(times, tags_first - 1e-12))
    seg = np.linalg.norm(np.diff(points[:k + 1], axis=0), axis=1)
    return float(seg.sum()), float(times[k])
