"""Geometry of planar oriented boxes (vehicles, walls) and of the convex polygons they overlap: the
one place of the laws the traffic's overlap check, the accident detector and the crash world share.

Frame: the planar map frame (ENU, x east, y north) [m]; headings [rad] from +x, counter-clockwise.
A box is length x width centred on its reference point, its length along its heading.

- :func:`half_extent`: the box's projected radius on an axis (separating-axis test, 004 sec. 7.1);
- :func:`bounding_radius`: half its diagonal, the bounding circle of the broad phases;
- :func:`box_overlap_centre`: the middle of the overlap of a box with a convex polygon (004: "at
  the middle of the overlap"): the area centroid of the intersection (:func:`overlap_centroid`,
  Sutherland-Hodgman clipping). When they only touch (an intersection of less area than
  TOUCH_AREA_M2, along an edge or at a corner) the box grown by TOUCH_GROW_M on every side gives
  the centroid of a thin strip along the touching edge, its middle to within TOUCH_GROW_M / 2
  (clipping a touch itself is unreliable: an edge off by 1e-16 rad leaves a sliver of any
  length); None when even the grown box has no overlap. The accident detector reports this
  point and the crash world applies its forces there: one point for both.

The kernels are jitted (their callers in the traffic and crash grids are); Python callers call the
same kernels (math.cos, sin and hypot are libm's there too: the same numbers), except for numpy
arrays, which take :data:`bounding_radii`, the same source run by numpy (np.hypot is libm's).
Kernels of ``core.traffic`` and ``core.accident`` compile these into their own disk-cached machine
code, which numba does not tie to this file: those packages name it in their ``NUMBA_SHARED``
(numba_cache.guard_package), so that a change here drops their caches (test_numba_cache checks).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

TOUCH_AREA_M2 = 1e-9  # an intersection with less area is a touch (no area to take a centroid of)
TOUCH_GROW_M = 0.005  # a touching box is grown by this on every side (see box_overlap_centre)


@njit(cache=True)
def half_extent(length_m, width_m, yaw_rad, heading_rad):
    """Half the extent [m] of a length x width box turned by yaw_rad along the axis of heading
    heading_rad [rad]: 0.5 (L |cos(h - yaw)| + W |sin(h - yaw)|)."""
    return 0.5 * (length_m * abs(math.cos(heading_rad - yaw_rad))
                  + width_m * abs(math.sin(heading_rad - yaw_rad)))


@njit(cache=True)
def bounding_radius(length_m, width_m):
    """Radius [m] of the circle around a length x width box centred on its reference point: half
    its diagonal."""
    return 0.5 * np.hypot(length_m, width_m)


bounding_radii = bounding_radius.py_func  # the same law on numpy arrays, run by numpy


@njit(cache=True)
def overlap_centroid(subject, clip):
    """(overlaps, cx, cy) [m]: the area centroid of the overlap of the convex polygon ``subject``
    with the convex, counter-clockwise polygon ``clip`` ((k, 2) float64 arrays); overlaps False
    (and 0, 0) when the overlap has less area than TOUCH_AREA_M2 (see :func:`box_overlap_centre`
    for touches)."""
    n, m = subject.shape[0], clip.shape[0]
    buf = np.empty((n + m + 1, 2))
    out = np.empty((n + m + 1, 2))
    buf[:n] = subject
    cnt = n
    for i in range(m):
        px, py = clip[i, 0], clip[i, 1]
        ex, ey = clip[(i + 1) % m, 0] - px, clip[(i + 1) % m, 1] - py
        k = 0
        for a in range(cnt):
            b = (a + 1) % cnt
            sa = ex * (buf[a, 1] - py) - ey * (buf[a, 0] - px)
            sb = ex * (buf[b, 1] - py) - ey * (buf[b, 0] - px)
            if sa >= 0.0:
                out[k] = buf[a]
                k += 1
            if (sa >= 0.0) != (sb >= 0.0):
                t = sa / (sa - sb)
                out[k, 0] = buf[a, 0] + t * (buf[b, 0] - buf[a, 0])
                out[k, 1] = buf[a, 1] + t * (buf[b, 1] - buf[a, 1])
                k += 1
        cnt = k
        if cnt == 0:
            return False, 0.0, 0.0
        buf[:cnt] = out[:cnt]
    area2 = cx = cy = 0.0
    for a in range(cnt):
        b = (a + 1) % cnt
        cross = buf[a, 0] * buf[b, 1] - buf[b, 0] * buf[a, 1]
        area2 += cross
        cx += (buf[a, 0] + buf[b, 0]) * cross
        cy += (buf[a, 1] + buf[b, 1]) * cross
    if abs(area2) < 2.0 * TOUCH_AREA_M2:  # a touch: no area, and clipping it is unreliable
        return False, 0.0, 0.0
    return True, cx / (3.0 * area2), cy / (3.0 * area2)


def overlap_centre(subject: np.ndarray, convex_ccw: np.ndarray) -> np.ndarray | None:
    """:func:`overlap_centroid` of two (k, 2) polygons (the second convex and counter-clockwise)
    as a point [m] (2,), None when their overlap has no area."""
    ok, cx, cy = overlap_centroid(np.ascontiguousarray(subject, dtype=np.float64),
                                  np.ascontiguousarray(convex_ccw, dtype=np.float64))
    return np.array([cx, cy]) if ok else None


def box_corners(x_m: float, y_m: float, yaw_rad: float, length_m: float, width_m: float
                ) -> np.ndarray:
    """(4, 2) corners [m] of a box counter-clockwise: front-left, rear-left, rear-right,
    front-right."""
    c, s = math.cos(yaw_rad), math.sin(yaw_rad)
    hl, hw = 0.5 * length_m, 0.5 * width_m
    local = np.array([(hl, hw), (-hl, hw), (-hl, -hw), (hl, -hw)])
    return np.column_stack((x_m + c * local[:, 0] - s * local[:, 1],
                            y_m + s * local[:, 0] + c * local[:, 1]))


def box_overlap_centre(x_m: float, y_m: float, yaw_rad: float, length_m: float, width_m: float,
                       other_ccw: np.ndarray) -> np.ndarray | None:
    """The middle [m] (2,) of the overlap of a box with the convex, counter-clockwise polygon
    ``other_ccw`` (k, 2), a touch included (see the module docstring); None when they are apart
    by more than TOUCH_GROW_M."""
    centre = overlap_centre(box_corners(x_m, y_m, yaw_rad, length_m, width_m), other_ccw)
    if centre is None:
        centre = overlap_centre(box_corners(x_m, y_m, yaw_rad, length_m + 2 * TOUCH_GROW_M,
                                            width_m + 2 * TOUCH_GROW_M), other_ccw)
    return centre
