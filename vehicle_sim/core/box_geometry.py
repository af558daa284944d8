"""Geometry of planar oriented boxes (vehicles, walls) and of the convex polygons they overlap: the
one place of the laws the traffic's overlap check, the accident detector and the crash world share.

Frame: the planar map frame (ENU, x east, y north) [m]; headings [rad] from +x, counter-clockwise.
A box is length x width centred on its reference point, its length along its heading.

- :func:`half_extent`: the box's projected radius on an axis (separating-axis test, 004 sec. 7.1);
- :func:`bounding_radius`: half its diagonal, the bounding circle of the broad phases.

The kernels are jitted (their callers in the traffic and crash grids are); Python callers call the
same kernels (math.cos, sin and hypot are libm's there too: the same numbers), except for numpy
arrays, which take :data:`bounding_radii`, the same source run by numpy (np.hypot is libm's).
Kernels of ``core.traffic`` compile these into their own disk-cached machine code, which numba
does not tie to this file: ``numba_cache.SHARED_SOURCES`` must list it so that a change here drops
that cache.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit


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
