"""Terrain of the full model: heightmap with analytic normal and a friction map (paper 001).

File format (``config.load(TerrainParams, path)``), world = odom (ENU) frame:

    default_surface: dry             # dry / wet / snow / ice (magic_formula.SURFACES)
    heightmap:                       # optional; flat z = 0 without it
      origin_m: [x0, y0]             # world position of heights_m[0][0]
      spacing_m: 1.0                 # grid step in x and y
      heights_m: [[...], ...]        # rows along +y, columns along +x
      interpolation: bspline         # bilinear (interpolating) or bspline (uniform cubic)
    zones:                           # optional; later zones win where they overlap
      - {surface: ice, friction_scale: 1.0, polygon_m: [[x, y], [x, y], [x, y]]}

Outside the grid the edge heights extend flat. 001 uses a B-spline surface: ``bspline`` treats
the heights as control points of a uniform bicubic B-spline (smooth normal, reproduces planes
exactly, smooths bumps); ``bilinear`` passes through the heights (normal jumps at cell edges).
Everything is packed into a float64 array read by numba (``pack_terrain``, ``ground``,
``surface_at``); the full model appends it to its parameter array.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from vehicle_sim.core.config import spec
from vehicle_sim.core.frames import ODOM_MAX_M
from vehicle_sim.core.vehicle.full14.magic_formula import SURFACES, surface_scales

_SURFACE_NAMES = tuple(SURFACES)
MAX_HEIGHT_M = 10_000.0  # above Everest (8,849 m), below any road (Dead Sea -430 m)
# |dh| / spacing_m between neighbouring grid points (an 84 deg face): 27x the steepest street
# (Ffordd Pen Llech, 37.45 %, Guinness World Records 2019), 10x an off-road vehicle's ~100 %
# gradeability, yet a 0.15 m kerb may rise within 1.5 cm of grid. Both interpolations' gradient
# is a weighted mean of these differences over spacing_m, so it bounds the surface's slope: the
# full model stays finite driving into such a wall (measured up to 50), not at 100 and beyond.
MAX_SLOPE = 10.0
# vertices of all zones together: each wheel's friction lookup (surface_at) tests every one, 16
# times per rk4 step; 1000 cost ~30 us per full14 step (measured, medium car; ~4 us without
# zones), within the 50 us of the highest physics rate (dynamics_params.MAX_PHYSICS_RATE_HZ).
# A hand-drawn patch has 4-20 vertices, a surveyed outline every 0.5 m of 100 m has 200.
MAX_ZONE_VERTICES = 1000


@dataclass(frozen=True)
class HeightmapParams:
    origin_m: tuple[float, float] = spec(unit="m", ge=-ODOM_MAX_M, le=ODOM_MAX_M)
    """world (x, y) of heights_m[0][0]"""
    spacing_m: float = spec(unit="m", gt=0.0, le=ODOM_MAX_M)
    """grid step"""
    heights_m: tuple[tuple[float, ...], ...] = spec(unit="m", ge=-MAX_HEIGHT_M, le=MAX_HEIGHT_M)
    """rows along +y"""
    interpolation: str = spec("bspline", choices=("bilinear", "bspline"))

    def __post_init__(self) -> None:
        rows = self.heights_m
        if len(rows) < 2 or any(len(r) != len(rows[0]) for r in rows) or len(rows[0]) < 2:
            raise ValueError("heights_m must be a rectangular grid of at least 2 x 2")
        grid = np.asarray(rows, dtype=float)
        for axis, (dj, di) in ((1, (0, 1)), (0, (1, 0))):  # along a row (x), along a column (y)
            rise = np.abs(np.diff(grid, axis=axis))
            j, i = np.unravel_index(np.argmax(rise), rise.shape)
            if rise[j, i] > MAX_SLOPE * self.spacing_m:  # no division: spacing_m may be tiny
                raise ValueError(
                    f"heights_m[{j}][{i}] and heights_m[{j + dj}][{i + di}] differ by "
                    f"{rise[j, i]:g} m over spacing_m {self.spacing_m:g} m: steeper than "
                    f"{MAX_SLOPE:g} (|dh| / spacing_m)")


@dataclass(frozen=True)
class FrictionZone:
    surface: str = spec(choices=_SURFACE_NAMES)
    """surface preset inside the polygon"""
    polygon_m: tuple[tuple[float, float], ...] = spec(unit="m", ge=-ODOM_MAX_M, le=ODOM_MAX_M)
    """vertices in odom"""
    friction_scale: float = spec(1.0, gt=0.0, le=3.0)
    """extra multiplier of the peak mu"""

    def __post_init__(self) -> None:
        if len(self.polygon_m) < 3:
            raise ValueError("polygon_m needs at least 3 vertices")


@dataclass(frozen=True)
class TerrainParams:
    default_surface: str = spec("dry", choices=_SURFACE_NAMES)
    heightmap: HeightmapParams = spec(None)
    zones: tuple[FrictionZone, ...] = spec(())

    def __post_init__(self) -> None:
        n = sum(len(z.polygon_m) for z in self.zones)
        if n > MAX_ZONE_VERTICES:
            raise ValueError(f"zones have {n} vertices in all, more than {MAX_ZONE_VERTICES} "
                             f"(every wheel's friction lookup tests each of them)")


T_KIND, T_X0, T_Y0, T_DS, T_NX, T_NY, T_MU, T_K, T_NZONES, T_ZONES, T_HEIGHTS = range(11)
T_HEADER = 11


def pack_terrain(terrain: TerrainParams | None) -> np.ndarray:
    """The terrain as one float64 array (layout T_*; absolute offsets are relative to it)."""
    t = terrain or TerrainParams()
    head = np.zeros(T_HEADER)
    head[T_MU], head[T_K] = surface_scales(t.default_surface)
    parts = [head]
    if t.heightmap is not None:
        hm = t.heightmap
        grid = np.asarray(hm.heights_m, dtype=float)
        head[T_KIND] = 1.0 if hm.interpolation == "bilinear" else 2.0
        head[T_X0], head[T_Y0] = hm.origin_m
        head[T_DS] = hm.spacing_m
        head[T_NY], head[T_NX] = grid.shape
        parts.append(grid.ravel())
    head[T_HEIGHTS] = T_HEADER
    head[T_ZONES] = sum(len(a) for a in parts)
    head[T_NZONES] = len(t.zones)
    for z in t.zones:
        lam_mu, lam_k = surface_scales(z.surface)
        verts = np.asarray(z.polygon_m, dtype=float).ravel()
        parts.append(np.array([lam_mu * z.friction_scale, lam_k, len(z.polygon_m)]))
        parts.append(verts)
    return np.concatenate(parts)


@njit(cache=True)
def _h(tp, o, i, j):
    """Grid height at column i (x), row j (y), indices clamped to the grid."""
    nx, ny = int(tp[o + T_NX]), int(tp[o + T_NY])
    i = min(max(i, 0), nx - 1)
    j = min(max(j, 0), ny - 1)
    return tp[o + int(tp[o + T_HEIGHTS]) + j * nx + i]


@njit(cache=True)
def _bilinear(tp, o, gx, gy):
    nx, ny = int(tp[o + T_NX]), int(tp[o + T_NY])
    inside_x = 0.0 <= gx <= nx - 1
    inside_y = 0.0 <= gy <= ny - 1
    gx = min(max(gx, 0.0), nx - 1.0)
    gy = min(max(gy, 0.0), ny - 1.0)
    i, j = min(int(gx), nx - 2), min(int(gy), ny - 2)
    tx, ty = gx - i, gy - j
    h00, h10 = _h(tp, o, i, j), _h(tp, o, i + 1, j)
    h01, h11 = _h(tp, o, i, j + 1), _h(tp, o, i + 1, j + 1)
    h = (h00 * (1 - tx) + h10 * tx) * (1 - ty) + (h01 * (1 - tx) + h11 * tx) * ty
    dx = ((h10 - h00) * (1 - ty) + (h11 - h01) * ty) if inside_x else 0.0
    dy = ((h01 - h00) * (1 - tx) + (h11 - h10) * tx) if inside_y else 0.0
    return h, dx, dy


@njit(cache=True)
def _basis(t):
    """Uniform cubic B-spline basis values and derivatives at t in [0, 1)."""
    u = 1.0 - t
    b = (u * u * u / 6.0, (3 * t ** 3 - 6 * t * t + 4) / 6.0,
         (-3 * t ** 3 + 3 * t * t + 3 * t + 1) / 6.0, t ** 3 / 6.0)
    d = (-u * u / 2.0, (3 * t * t - 4 * t) / 2.0, (-3 * t * t + 2 * t + 1) / 2.0, t * t / 2.0)
    return b, d


@njit(cache=True)
def _bspline(tp, o, gx, gy):
    nx, ny = int(tp[o + T_NX]), int(tp[o + T_NY])
    gx = min(max(gx, 0.0), nx - 1.0)
    gy = min(max(gy, 0.0), ny - 1.0)
    i, j = int(gx), int(gy)  # gx, gy >= 0 after clamping: truncation is floor
    bx, dbx = _basis(gx - i)
    by, dby = _basis(gy - j)
    h = hx = hy = 0.0
    for a in range(4):
        for c in range(4):
            v = _h(tp, o, i - 1 + a, j - 1 + c)
            h += bx[a] * by[c] * v
            hx += dbx[a] * by[c] * v
            hy += bx[a] * dby[c] * v
    return h, hx, hy


@njit(cache=True)
def ground(tp, o, x, y):
    """(height [m], dh/dx, dh/dy) of the terrain packed at tp[o:] under world (x, y)."""
    kind = tp[o + T_KIND]
    if kind == 0.0:
        return 0.0, 0.0, 0.0
    ds = tp[o + T_DS]
    gx, gy = (x - tp[o + T_X0]) / ds, (y - tp[o + T_Y0]) / ds
    if kind == 1.0:
        h, hx, hy = _bilinear(tp, o, gx, gy)
    else:
        h, hx, hy = _bspline(tp, o, gx, gy)
    return h, hx / ds, hy / ds


@njit(cache=True)
def _inside(tp, start, n, x, y):
    """Even-odd ray casting for the polygon of n vertices stored at tp[start:]."""
    inside = False
    k = n - 1
    for i in range(n):
        xi, yi = tp[start + 2 * i], tp[start + 2 * i + 1]
        xk, yk = tp[start + 2 * k], tp[start + 2 * k + 1]
        if (yi > y) != (yk > y) and x < (xk - xi) * (y - yi) / (yk - yi) + xi:
            inside = not inside
        k = i
    return inside


@njit(cache=True)
def surface_at(tp, o, x, y):
    """(lambda_mu, lambda_K) scaling of the tyre at world (x, y); the last matching zone wins."""
    lam_mu, lam_k = tp[o + T_MU], tp[o + T_K]
    pos = o + int(tp[o + T_ZONES])
    for _ in range(int(tp[o + T_NZONES])):
        n = int(tp[pos + 2])
        if _inside(tp, pos + 3, n, x, y):
            lam_mu, lam_k = tp[pos], tp[pos + 1]
        pos += 3 + 2 * n
    return lam_mu, lam_k


class Terrain:
    """Python access to a packed terrain (for tests, planners and visualisation)."""

    def __init__(self, params: TerrainParams | None = None):
        self.params = params or TerrainParams()
        self.packed = pack_terrain(self.params)

    def height_m(self, x: float, y: float) -> float:
        return ground(self.packed, 0, x, y)[0]

    def normal(self, x: float, y: float) -> np.ndarray:
        """Unit upward surface normal (-dh/dx, -dh/dy, 1) / norm."""
        _, hx, hy = ground(self.packed, 0, x, y)
        n = np.array([-hx, -hy, 1.0])
        return n / np.linalg.norm(n)

    def friction_scales(self, x: float, y: float) -> tuple[float, float]:
        return surface_at(self.packed, 0, x, y)
