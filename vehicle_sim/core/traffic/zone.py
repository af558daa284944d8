"""Control zone and sectors of paper 004 sec. 3, and placing agents on lanes.

The zone is a rectangle in the ego frame: x in [-behind_m, ahead_m] (ego towards the rear),
|y| <= half_width_m. The city is cut into square sectors of ``sector_size_m`` (>= the zone
diagonal, so the zone overlaps at most 2 x 2 sectors); only lanes of those sectors are
intersected with the zone boundary. Agents are created where the boundary crosses lanes
inwards (driving direction) and deleted once outside, keeping ``density_per_km`` of street lane.
"""
from __future__ import annotations

import math
import weakref
from collections.abc import Callable

import numpy as np

from vehicle_sim.core.traffic.kernels.layout import LF_LEN, LF_SPEED, LI_CNODE, LI_ENODE
from vehicle_sim.core.traffic.network import Network
from vehicle_sim.core.traffic.params import ZoneParams

SPAWN_CLEAR_M = 12.0  # free distance around a new agent (car 4.3 m + IDM s0 2 m, both sides)
SPAWN_END_MARGIN_M = 25.0  # no spawning this close to a lane end (junction approach)


class Sectors:
    """Square sectors over the map bounds: id = sy * nx + sx."""

    def __init__(self, network: Network, size_m: float):
        x0, y0, x1, y1 = network.bounds
        self.x0, self.y0, self.size = x0 - 1.0, y0 - 1.0, size_m
        self.nx = math.ceil((x1 - self.x0 + 1.0) / size_m)
        self.ny = math.ceil((y1 - self.y0 + 1.0) / size_m)

    def of(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Sector ids of points (clamped to the grid)."""
        sx = np.clip(((np.asarray(x) - self.x0) // self.size).astype(np.int64), 0, self.nx - 1)
        sy = np.clip(((np.asarray(y) - self.y0) // self.size).astype(np.int64), 0, self.ny - 1)
        return sy * self.nx + sx

    def covering(self, xmin: float, ymin: float, xmax: float, ymax: float) -> np.ndarray:
        """Sector ids overlapped by an axis-aligned box."""
        a = self.of(np.array([xmin, xmax]), np.array([ymin, ymax]))
        sx0, sx1 = a[0] % self.nx, a[1] % self.nx
        sy0, sy1 = a[0] // self.nx, a[1] // self.nx
        return np.array([sy * self.nx + sx for sy in range(sy0, sy1 + 1)
                         for sx in range(sx0, sx1 + 1)], dtype=np.int64)


class ControlZone:
    """Zone geometry, covered sectors, boundary crossings and in-zone lane length."""

    def __init__(self, network: Network, params: ZoneParams):
        self.p, self.net = params, network
        self.sectors = Sectors(network, params.sector_size_m)
        street = np.array([network.net.lane_i[ln, LI_CNODE] < 0 for ln in range(network.n_lanes)])
        pts, lanes = [], []
        for ln in np.flatnonzero(street):
            pts.append(network.paths[ln][:, [0, 1, 3]])
            lanes.append(np.full(len(network.paths[ln]), ln))
        self.pts = np.concatenate(pts)
        self.pt_lane = np.concatenate(lanes)
        self.pt_sector = self.sectors.of(self.pts[:, 0], self.pts[:, 1])

    def inside(self, ego: tuple[float, float, float], x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Mask of points inside the zone of ego pose (x, y, yaw)."""
        ex, ey, yaw = ego
        c, s = math.cos(yaw), math.sin(yaw)
        lx = (x - ex) * c + (y - ey) * s
        ly = -(x - ex) * s + (y - ey) * c
        p = self.p
        return (lx >= -p.behind_m) & (lx <= p.ahead_m) & (np.abs(ly) <= p.half_width_m)

    def covered_sectors(self, ego: tuple[float, float, float]) -> np.ndarray:
        """Sectors overlapped by the zone (at most 4 by construction)."""
        ex, ey, yaw = ego
        c, s, p = math.cos(yaw), math.sin(yaw), self.p
        lx = np.array([-p.behind_m, p.ahead_m, p.ahead_m, -p.behind_m])
        ly = np.array([-p.half_width_m, -p.half_width_m, p.half_width_m, p.half_width_m])
        xs, ys = ex + lx * c - ly * s, ey + lx * s + ly * c
        return self.sectors.covering(xs.min(), ys.min(), xs.max(), ys.max())

    def scan(self, ego: tuple[float, float, float], moving: bool = False
             ) -> tuple[np.ndarray, np.ndarray, float]:
        """Spawn points (lane, s) where the zone boundary crosses lanes inwards, and the length
        [m] of street lane inside. With ``moving``, crossings of the front half where lanes
        leave the zone are included too: the advancing edge sweeps over them."""
        sel = np.isin(self.pt_sector, self.covered_sectors(ego))
        pts, lane = self.pts[sel], self.pt_lane[sel]
        ins = self.inside(ego, pts[:, 0], pts[:, 1])
        same = lane[1:] == lane[:-1]
        seg = np.hypot(np.diff(pts[:, 0]), np.diff(pts[:, 1]))
        length = float(np.sum(seg[same & ins[1:] & ins[:-1]]))
        entry = np.flatnonzero(same & ~ins[:-1] & ins[1:]) + 1
        if moving:
            out = np.flatnonzero(same & ins[:-1] & ~ins[1:])
            ahead = (pts[out, 0] - ego[0]) * math.cos(ego[2]) + \
                (pts[out, 1] - ego[1]) * math.sin(ego[2]) > 0.0
            entry = np.concatenate((entry, out[ahead]))
        return lane[entry], pts[entry, 2], length

    def active_nodes(self, ego: tuple[float, float, float]) -> np.ndarray:
        """Mask of nodes whose centre is inside the zone (their lights are simulated)."""
        nf = self.net.net.node_f[:-1]
        return self.inside(ego, nf[:, 0], nf[:, 1])


def spawn_speed(network: Network, lane: int, s: float, factor: float, decel: float) -> float:
    """Desired speed, reduced so the agent can still stop at the lane end with ``decel``."""
    lf, li = network.net.lane_f, network.net.lane_i
    v = factor * lf[lane, LF_SPEED]
    if li[lane, LI_ENODE] >= 0:
        v = min(v, math.sqrt(2.0 * decel * max(lf[lane, LF_LEN] - s - 10.0, 0.0)))
    return v


def free_at(lane_of: np.ndarray, s_of: np.ndarray, xy: np.ndarray, lane: int, s: float,
            p: np.ndarray) -> bool:
    """True if no agent is within SPAWN_CLEAR_M of (lane, s) along it or of point p."""
    on = lane_of == lane
    if on.any() and np.min(np.abs(s_of[on] - s)) < SPAWN_CLEAR_M:
        return False
    return len(xy) == 0 or np.min(np.hypot(xy[:, 0] - p[0], xy[:, 1] - p[1])) >= SPAWN_CLEAR_M


_SPAWN_LANES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # network -> table


def _spawn_lanes(network: Network) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The street lanes long enough to spawn on, their lengths [m] and the cumulative
    distribution of their usable lengths (what Generator.choice builds from p), once per
    network: the traffic draws spawn positions every step (issue 14)."""
    table = _SPAWN_LANES.get(network)
    if table is None:
        lf, li = network.net.lane_f, network.net.lane_i
        lanes = np.array([ln for ln in range(network.n_lanes) if li[ln, LI_CNODE] < 0
                          and lf[ln, LF_LEN] > 2 * SPAWN_CLEAR_M], dtype=np.int64)
        usable = lf[lanes, LF_LEN] - SPAWN_CLEAR_M
        cdf = np.cumsum(usable / usable.sum()) if len(lanes) else np.zeros(0)
        if len(cdf):
            cdf /= cdf[-1]
        table = _SPAWN_LANES[network] = (lanes, lf[lanes, LF_LEN].copy(), cdf)
    return table


def random_positions(network: Network, n: int, rng: np.random.Generator,
                     mask: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None
                     ) -> list[tuple[int, float]]:
    """Up to n (lane, s) on street lanes, length-weighted, >= SPAWN_CLEAR_M apart per lane, of
    at most 20 n tries; ``mask(lanes, s)`` keeps a try (arrays of them, evaluated at once).

    A try draws the lane as ``rng.choice(len(lanes), p=usable / usable.sum())`` does (one
    uniform double, searched in the same cumulative distribution), then s as
    ``rng.uniform(SPAWN_CLEAR_M / 2, length - SPAWN_CLEAR_M / 2)``. All tries are drawn at once
    and the generator is then left where the tries used up to the n-th position leave it: the
    same positions and the same stream as one try after the other (issue 14: this ran every
    traffic step, a Python loop of up to 20 n tries)."""
    lanes, length, cdf = _spawn_lanes(network)
    if not len(lanes) or n <= 0:  # Generator.choice would refuse an empty p
        return []
    tries = 20 * n
    start = rng.bit_generator.state
    u = rng.random(2 * tries).reshape(tries, 2)
    k = cdf.searchsorted(u[:, 0], side="right")
    low = SPAWN_CLEAR_M / 2
    s = low + ((length[k] - low) - low) * u[:, 1]  # numpy's uniform: low + (high - low) u
    keep = np.flatnonzero(mask(lanes[k], s)) if mask is not None else range(tries)
    taken: dict[int, list[float]] = {}
    out: list[tuple[int, float]] = []
    for i in keep:
        ln, si = int(lanes[k[i]]), float(s[i])
        if all(abs(si - o) >= SPAWN_CLEAR_M for o in taken.get(ln, [])):
            taken.setdefault(ln, []).append(si)
            out.append((ln, si))
            if len(out) >= n:  # tries 0..i used: the stream goes on from there
                rng.bit_generator.state = start
                rng.random(2 * (i + 1))
                break
    return out
