"""The drivable area of the map as an occupancy grid, for Nav2-style users (issue 12).

A cell is FREE when its centre lies on a lane (street lanes and junction connectors: within
half the lane width of the centre line), OCCUPIED otherwise, nav_msgs/OccupancyGrid's values
(0 free, 100 occupied). Row-major from the lower-left corner: cell (row, col) has its centre at
``origin + ((col + 0.5) r, (row + 0.5) r)`` in the map frame, as OccupancyGrid defines. The grid
covers the network's bounds plus ``margin_m``. Static objects are not drawn (they stand off the
lanes). No ROS import here.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from vehicle_sim.core.config import spec
from vehicle_sim.core.traffic.kernels.layout import LF_WIDTH
from vehicle_sim.core.traffic.network import Network

FREE, OCCUPIED = 0, 100
MAX_CELLS = 50_000_000  # 50 MB of int8: a 1.4 km square at 0.2 m; more is refused


@dataclass(frozen=True)
class GridParams:
    """Resolution and extent of the drivable-area grid."""

    resolution_m: float = spec(0.2, unit="m", ge=0.02, le=5.0)
    """cell size (0.2 m: a tenth of a car width)"""
    margin_m: float = spec(5.0, unit="m", ge=0.0, le=200.0)
    """occupied border around the lanes' extent"""


@dataclass(frozen=True)
class DrivableGrid:
    """Cells (rows, cols) int8 FREE / OCCUPIED; origin [m] of the lower-left corner."""

    cells: np.ndarray
    origin_xy_m: tuple[float, float]
    resolution_m: float


def drivable_grid(network: Network, p: GridParams = GridParams()) -> DrivableGrid:
    """Rasterise every lane of ``network``; ValueError if the grid would exceed MAX_CELLS."""
    x0, y0, x1, y1 = (float(v) for v in network.bounds)
    r = p.resolution_m
    widest = float(network.net.lane_f[:, LF_WIDTH].max())
    pad = p.margin_m + widest
    ox, oy = x0 - pad, y0 - pad
    cols, rows = int(np.ceil((x1 - x0 + 2 * pad) / r)), int(np.ceil((y1 - y0 + 2 * pad) / r))
    if rows * cols > MAX_CELLS:
        raise ValueError(f"grid of {rows} x {cols} cells at {r:g} m exceeds {MAX_CELLS} cells: "
                         f"choose a coarser resolution")
    cells = np.full((rows, cols), OCCUPIED, dtype=np.int8)
    for lane in range(network.n_lanes):
        half = 0.5 * float(network.net.lane_f[lane, LF_WIDTH])
        pts = network.paths[lane][:, :2]
        for a, b in zip(pts[:-1], pts[1:], strict=True):
            _paint_segment(cells, a, b, half, (ox, oy), r)
    return DrivableGrid(cells, (ox, oy), r)


def _paint_segment(cells: np.ndarray, a: np.ndarray, b: np.ndarray, half: float,
                   origin: tuple[float, float], r: float) -> None:
    """Mark FREE the cells whose centre is within ``half`` of segment a-b."""
    lo, hi = np.minimum(a, b) - half, np.maximum(a, b) + half
    c0, r0 = (int(np.floor((lo[k] - origin[k]) / r)) for k in (0, 1))
    c1, r1 = (int(np.ceil((hi[k] - origin[k]) / r)) for k in (0, 1))
    c0, r0 = max(c0, 0), max(r0, 0)
    c1, r1 = min(c1, cells.shape[1]), min(r1, cells.shape[0])
    if c0 >= c1 or r0 >= r1:
        return
    cx = origin[0] + (np.arange(c0, c1) + 0.5) * r
    cy = origin[1] + (np.arange(r0, r1) + 0.5) * r
    px, py = np.meshgrid(cx - a[0], cy - a[1])
    d = b - a
    length2 = float(d @ d)
    t = np.clip((px * d[0] + py * d[1]) / length2, 0.0, 1.0) if length2 > 0 else 0.0
    dist2 = (px - t * d[0]) ** 2 + (py - t * d[1]) ** 2
    block = cells[r0:r1, c0:c1]
    block[dist2 <= half * half] = FREE


def cell_of(grid: DrivableGrid, x_m: float, y_m: float) -> tuple[int, int]:
    """(row, col) of the cell holding map point (x, y)."""
    return (int((y_m - grid.origin_xy_m[1]) // grid.resolution_m),
            int((x_m - grid.origin_xy_m[0]) // grid.resolution_m))


def pgm_and_yaml(grid: DrivableGrid, image_name: str) -> tuple[bytes, str]:
    """Nav2 map_server files: a binary PGM (free white 254, occupied black 0, top row = north)
    and its YAML (``mode: trinary``, the origin of the lower-left corner)."""
    image = np.where(grid.cells[::-1] == FREE, 254, 0).astype(np.uint8)
    header = f"P5\n{image.shape[1]} {image.shape[0]}\n255\n".encode()
    ox, oy = grid.origin_xy_m
    meta = (f"image: {image_name}\nmode: trinary\nresolution: {grid.resolution_m}\n"
            f"origin: [{ox:.4f}, {oy:.4f}, 0.0]\nnegate: 0\noccupied_thresh: 0.65\n"
            f"free_thresh: 0.25\n")
    return header + image.tobytes(), meta
