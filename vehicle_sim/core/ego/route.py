"""A route of the ego over the lanes of the traffic network (paper 004 sec. 2).

At the end of each lane the next lane is drawn from the node's connections with their configured
exit probabilities (004 "Nodes"), from an explicit numpy Generator, so a seed fixes the route.
Lanes are the compiled ``Network`` lanes: street lanes and the generated junction connectors.

Frame: the map frame (ENU, x east, y north) [m]; headings [rad]; arc lengths s [m] along each
lane's centre line. The tracked point is the one the caller passes (the ego CG).
"""
from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np

from vehicle_sim.core.traffic.kernels.route_scan import route_points
from vehicle_sim.core.traffic.network import Network

HEADING_WEIGHT_M = 10.0  # start-lane cost: 1 - cos(heading error) weighs like 10 m of distance


def nearest_lane(network: Network, x: float, y: float, yaw: float) -> tuple[int, float]:
    """(street lane index, distance [m]) of the street lane best matching a pose.

    Cost = distance to the lane's centre line + HEADING_WEIGHT_M * (1 - cos(heading error));
    lanes heading more than 90 deg away are skipped. Raises ValueError if none qualifies.
    """
    best, best_cost, best_d = -1, math.inf, math.inf
    for lane in range(network.n_street_lanes):
        pts = network.paths[lane]
        a, b = pts[:-1, :2], pts[1:, :2]
        ab = b - a
        t = np.clip(((x - a[:, 0]) * ab[:, 0] + (y - a[:, 1]) * ab[:, 1]) /
                    np.maximum((ab ** 2).sum(axis=1), 1e-12), 0.0, 1.0)
        d = np.hypot(a[:, 0] + t * ab[:, 0] - x, a[:, 1] + t * ab[:, 1] - y)
        k = int(np.argmin(d))
        dh = math.cos(pts[k, 2] - yaw)
        if dh <= 0.0:
            continue
        cost = d[k] + HEADING_WEIGHT_M * (1.0 - dh)
        if cost < best_cost:
            best, best_cost, best_d = lane, cost, float(d[k])
    if best < 0:
        raise ValueError(f"no lane of the map heads within 90 deg of yaw {yaw:.2f} rad")
    return best, best_d


class Route:
    """The lanes ahead of the ego and its position on them (arc length and lateral offset)."""

    def __init__(self, network: Network, start_lane: int, rng: np.random.Generator,
                 horizon_m: float):
        self.network, self.rng, self.horizon_m = network, rng, horizon_m
        # lane lengths [m] as Python floats: read several hundred times per control step
        self._length_m = [network.lane_length(lane) for lane in range(network.n_lanes)]
        self._ahead_m: dict[tuple[float, float], np.ndarray] = {}  # polyline's distances
        self.lanes: list[int] = [start_lane]
        self.first = 0  # route index of lanes[0] (grows as lanes are left behind)
        self.s_m = 0.0  # arc length on the current lane (lanes[0]); < 0 before its start
        self.lateral_m = 0.0  # + left of the centre line
        self.dead_end = False  # the last lane has no successor
        self._extend()

    @property
    def lane(self) -> int:
        return self.lanes[0]

    def length(self, lane: int) -> float:
        return self._length_m[lane]

    def _extend(self) -> None:
        ahead = sum(self.length(ln) for ln in self.lanes) - self.s_m
        while ahead < self.horizon_m and not self.dead_end:
            last = self.lanes[-1]
            lanes, cum = self.network.successors(last)
            if len(lanes) == 0:
                self.dead_end = True
                break
            pick = min(int(np.searchsorted(cum, self.rng.random(), side="right")), len(lanes) - 1)
            nxt = int(lanes[pick])
            self.lanes.append(nxt)
            ahead += self.length(nxt)

    def localize(self, x: float, y: float, s_guess: float | None = None) -> None:
        """Update s and lateral offset from the position (x, y) [m]; advances past lane ends."""
        if s_guess is None:
            s_guess = self.s_m
        while True:
            s, lat = self.network.locate(self.lane, s_guess, x, y)
            length = self.length(self.lane)
            if s <= length or len(self.lanes) == 1:
                break
            self.lanes.pop(0)
            self.first += 1
            s_guess = s - length
        self.s_m, self.lateral_m = float(s), float(lat)
        self._extend()

    def point_ahead(self, ds: float) -> tuple[float, float, float, float]:
        """(x, y, heading, curvature) ds [m] ahead of the current position along the route."""
        s = self.s_m + ds
        last = len(self.lanes) - 1
        for i, lane in enumerate(self.lanes):
            length = self._length_m[lane]
            if s <= length or i == last:
                return self.network.point(lane, s)
            s -= length
        raise AssertionError("unreachable")

    def lanes_ahead(self, max_m: float) -> Iterator[tuple[int, int, float]]:
        """(route index, lane, distance [m] from the current position to the lane's start)."""
        start = -self.s_m
        for i, lane in enumerate(self.lanes):
            if start > max_m:
                return
            yield self.first + i, lane, start
            start += self.length(lane)

    def polyline(self, max_m: float, step_m: float) -> np.ndarray:
        """(n, 4) points x, y [m], heading [rad], distance ahead [m] from here to max_m, every
        step_m (the points of ``point_ahead``, in one kernel: kernels.route_scan)."""
        d = self._ahead_m.get((max_m, step_m))
        if d is None:
            d = self._ahead_m[max_m, step_m] = np.arange(0.0, max_m + 1e-9, step_m)
        net = self.network.net
        return route_points(net.pts, net.lane_f, net.lane_i, np.array(self.lanes, dtype=np.int64),
                            self.s_m, d)
