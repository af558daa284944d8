"""kernels.route_scan against the Python and numpy code it replaced in the ego autopilot: the same
points and the same leader, bit for bit, on routes and agents of urban_grid."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from vehicle_sim.core.ego.route import Route
from vehicle_sim.core.traffic.kernels import driver_law as law
from vehicle_sim.core.traffic.kernels.route_scan import corridor_leader
from vehicle_sim.core.traffic.mapfile import load_map
from vehicle_sim.core.traffic.network import Network

CONFIG = Path(__file__).resolve().parents[2] / "config"
HORIZON_M, STEP_M, OWN, MARGIN_M = 150.0, 2.0, (4.6, 1.85), 0.4


@pytest.fixture(scope="module")
def network():
    return Network(load_map(CONFIG / "maps" / "urban_grid.yaml"))


def routes(network):
    """Routes from several street lanes and seeds, at several arc lengths (one before the start,
    several past the first lane's end)."""
    rng = np.random.default_rng(7)
    for lane in rng.choice(network.n_street_lanes, 12, replace=False):
        route = Route(network, int(lane), np.random.default_rng(int(lane)), HORIZON_M)
        for s in (-3.0, 0.0, 17.3, route.length(route.lane) - 0.1, route.length(route.lane)):
            route.s_m = s
            yield route


def polyline_reference(route: Route) -> np.ndarray:
    """Route.polyline as it was: one point_ahead per distance."""
    d = np.arange(0.0, HORIZON_M + 1e-9, STEP_M)
    return np.array([(*route.point_ahead(float(di))[:3], di) for di in d])


def leader_reference(a, line, x0, y0):
    """The autopilot's leader search as it was (numpy over all agents, then one call each)."""
    a = a[np.hypot(a[:, 0] - x0, a[:, 1] - y0) < HORIZON_M]
    if len(a) == 0:
        return None
    d2 = (a[:, None, 0] - line[None, :, 0]) ** 2 + (a[:, None, 1] - line[None, :, 1]) ** 2
    j = np.argmin(d2, axis=1)
    h = line[j, 2]
    dx, dy = a[:, 0] - line[j, 0], a[:, 1] - line[j, 1]
    along = line[j, 3] + dx * np.cos(h) + dy * np.sin(h)
    lat = -dx * np.sin(h) + dy * np.cos(h)
    cr = np.cos(a[:, 2] - h)
    gap = np.array([law.corridor_gap(along[k], lat[k], cr[k], OWN, (a[k, 4], a[k, 5]), MARGIN_M)
                    for k in range(len(a))])
    k = int(np.argmin(gap))
    return None if gap[k] == math.inf else (a[k], gap[k], cr[k])


def test_polyline_is_point_ahead_bit_for_bit(network):
    n = 0
    for route in routes(network):
        assert np.array_equal(route.polyline(HORIZON_M, STEP_M), polyline_reference(route))
        n += 1
    assert n == 60


def test_corridor_leader_is_the_numpy_search_bit_for_bit(network):
    rng = np.random.default_rng(3)
    found = 0
    for route in routes(network):
        line = route.polyline(HORIZON_M, STEP_M)
        x0, y0, _, _ = route.point_ahead(0.0)
        # agents along the route (some in the corridor, some beside it) and scattered
        on = line[rng.integers(0, len(line), 20)]
        agents = np.column_stack([
            np.concatenate([on[:, 0] + rng.normal(0.0, 2.0, 20), rng.uniform(-50, 400, 20)]),
            np.concatenate([on[:, 1] + rng.normal(0.0, 2.0, 20), rng.uniform(-50, 400, 20)]),
            rng.uniform(-math.pi, math.pi, 40), rng.uniform(0.0, 15.0, 40),
            rng.uniform(3.5, 6.0, 40), rng.uniform(1.6, 2.2, 40)])
        k, gap, cos_rel = corridor_leader(agents, line, x0, y0, HORIZON_M, OWN, MARGIN_M)
        ref = leader_reference(agents, line, x0, y0)
        if ref is None:
            assert k == -1 and gap == math.inf
            continue
        found += 1
        assert np.array_equal(agents[k], ref[0]) and gap == ref[1] and cos_rel == ref[2]
    assert found > 30  # most routes have a leader: the comparison is not vacuous
