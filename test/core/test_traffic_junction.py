"""Junction priority of paper 004 sec. 6.3 and the single-track model of 004 eqs. 1-5."""
import math

import numpy as np
import pytest

from vehicle_sim.core.traffic import agents as ag
from vehicle_sim.core.traffic.kernels import junction as kj
from vehicle_sim.core.traffic.kernels import layout as lay
from vehicle_sim.core.traffic.kernels.agent_vehicle import single_track
from vehicle_sim.core.traffic.mapfile import map_from_dict
from vehicle_sim.core.traffic.network import Network
from vehicle_sim.core.traffic.params import TrafficParams, ZoneParams
from vehicle_sim.core.traffic.sim import TrafficSim


def _street(name, x, y, h, length):
    return {"id": name, "road": name,
            "lanes": [{"id": name + "_f", "offset_m": -1.75, "width_m": 3.5}],
            "reference": {"x_m": x, "y_m": y, "heading_rad": h,
                          "pieces": [{"length_m": length, "curvature_1pm": 0.0}]}}


def cross(signs: list[dict]) -> TrafficSim:
    data = {"format_version": 1, "streets": [
        _street("a", -300, 0, 0.0, 290), _street("b", 10, 0, 0.0, 300),
        _street("c", 0, 300, -math.pi / 2, 290), _street("d", 0, -10, -math.pi / 2, 300)],
        "nodes": [{"id": "j", "x_m": 0, "y_m": 0, "connections": [
            {"from_lane": "a_f", "to_lane": "b_f", "probability": 1.0},
            {"from_lane": "c_f", "to_lane": "d_f", "probability": 1.0}]}],
        "signals": signs}
    params = TrafficParams(spread=0.0, zone=ZoneParams(enabled=False))
    return TrafficSim(Network(map_from_dict(data)), params, seed=1)


def entry_times(sim: TrafficSim, slots: list[int], seconds: float) -> list[float]:
    lanes = [sim.store.ai[lay.AI_LANE, i] for i in slots]
    t_in = [math.inf] * len(slots)
    for _ in range(int(seconds / 0.05)):
        sim.step(0.05)
        for k, i in enumerate(slots):
            if t_in[k] == math.inf and sim.store.ai[lay.AI_LANE, i] != lanes[k]:
                t_in[k] = sim.time_s
    return t_in


def test_all_way_stop_serves_vehicles_in_arrival_order():
    """004: at a stop sign the relative arrival order decides, whatever the geometry."""
    sim = cross([{"id": "st", "kind": "stop", "lanes": ["a_f", "c_f"]}])
    late = sim.spawn(sim.network.lane_index("a_f"), 230.0, speed=8.0, profile=ag.PASSIVE)
    early = sim.spawn(sim.network.lane_index("c_f"), 250.0, speed=8.0, profile=ag.PASSIVE)
    t_late, t_early = entry_times(sim, [late, early], 40.0)
    assert t_early < t_late < math.inf
    assert t_late - t_early > 2.0  # the second waited for the first to clear the conflict


def test_give_way_road_yields_to_the_major_road_even_if_first():
    sim = cross([{"id": "gw", "kind": "give_way", "lanes": ["c_f"]}])
    major = sim.spawn(sim.network.lane_index("a_f"), 235.0, speed=10.0, profile=ag.MODERATE)
    minor = sim.spawn(sim.network.lane_index("c_f"), 255.0, speed=10.0, profile=ag.MODERATE)
    t_major, t_minor = entry_times(sim, [major, minor], 40.0)
    assert t_major < t_minor < math.inf


def test_visibility_rule_the_driver_who_sees_the_other_concedes():
    """004 fig. 10: compare the bearing of the other with one's heading; smaller angle stops."""
    sim = cross([])
    i = sim.spawn(sim.network.lane_index("a_f"), 270.0, speed=5.0)  # 20 m west, heading east
    j = sim.spawn(sim.network.lane_index("c_f"), 260.0, speed=5.0)  # 30 m north, heading south
    af, ai, net = sim.store.af, sim.store.ai, sim.network.net
    th_i = abs(math.atan2(af[lay.AF_Y, j] - af[lay.AF_Y, i], af[lay.AF_X, j] - af[lay.AF_X, i])
               - af[lay.AF_YAW, i])
    th_j = abs(math.atan2(af[lay.AF_Y, i] - af[lay.AF_Y, j], af[lay.AF_X, i] - af[lay.AF_X, j])
               - af[lay.AF_YAW, j] + 2 * math.pi) % (2 * math.pi)
    th_j = min(th_j, 2 * math.pi - th_j)
    assert th_j < th_i  # j (farther) has i more in view: j must concede
    ci, cj = ai[lay.AI_NEXT, i], ai[lay.AI_NEXT, j]
    args = (net, af, ai, sim.cfg)
    assert kj.wins(*args, i, j, (0, False, ci), (0, False, cj))
    assert not kj.wins(*args, j, i, (0, False, cj), (0, False, ci))


def test_single_track_steady_turn_matches_neutral_steer():
    """With load-normalised equal cornering coefficients the car is neutral steer (understeer
    gradient m/L (b/C_f - a/C_r) = 0), so 004 eqs. 1-5 settle at r = u delta / (a + b)."""
    sim = cross([])
    i = sim.spawn(0, 50.0, speed=10.0)
    af, vp = sim.store.af, sim.vp
    delta, u = 0.02, 10.0
    for _ in range(200):
        af[lay.AF_U, i] = u  # hold the speed: isolate the lateral dynamics
        single_track(af, vp, i, 0.0, delta, 0.05)
    wheelbase = vp[lay.VP_A] + vp[lay.VP_B]
    assert af[lay.AF_R, i] == pytest.approx(u * delta / wheelbase, rel=1e-3)
    assert np.isfinite(af[:, i]).all()
