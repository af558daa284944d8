"""Driver profiles of paper 004 sec. 6.3.3 differ at yellow lights, stop signs and crossings."""
import math

import pytest

from vehicle_sim.core.traffic import agents as ag
from vehicle_sim.core.traffic.kernels import layout as lay
from vehicle_sim.core.traffic.kernels.layout import LF_LEN
from vehicle_sim.core.traffic.mapfile import map_from_dict
from vehicle_sim.core.traffic.network import Network
from vehicle_sim.core.traffic.params import LightParams, TrafficParams, ZoneParams
from vehicle_sim.core.traffic.sim import TrafficSim

DT = 0.05


def _street(name, x, y, h, length):
    return {"id": name, "road": name,
            "lanes": [{"id": name + "_f", "offset_m": -1.75, "width_m": 3.5}],
            "reference": {"x_m": x, "y_m": y, "heading_rad": h,
                          "pieces": [{"length_m": length, "curvature_1pm": 0.0}]}}


def make(signals, streets=None, nodes=None) -> TrafficSim:
    data = {"format_version": 1, "signals": signals, "streets": streets or [
        _street("a", -300, 0, 0.0, 290), _street("b", 10, 0, 0.0, 300),
        _street("c", 0, 300, -math.pi / 2, 290), _street("d", 0, -10, -math.pi / 2, 300)],
        "nodes": nodes if nodes is not None else [{"id": "j", "x_m": 0, "y_m": 0,
                                                    "connections": [
            {"from_lane": "a_f", "to_lane": "b_f", "probability": 1.0},
            {"from_lane": "c_f", "to_lane": "d_f", "probability": 1.0}]}]}
    params = TrafficParams(spread=0.0, zone=ZoneParams(enabled=False),
                           lights=LightParams(cycle_s=200.0))
    return TrafficSim(Network(map_from_dict(data)), params, seed=1)


LIGHTS = [{"id": "tl_a", "kind": "traffic_light", "lanes": ["a_f"], "distance_from_end_m": 3.0},
          {"id": "tl_c", "kind": "traffic_light", "lanes": ["c_f"], "distance_from_end_m": 3.0}]


@pytest.mark.parametrize("profile, goes", [(ag.AGGRESSIVE, True), (ag.MODERATE, False),
                                           (ag.PASSIVE, False)])
def test_yellow_onset_dilemma_depends_on_the_profile(profile, goes):
    """At yellow onset 25 m before the line at 11 m/s stopping needs 2.4 m/s^2: more than the
    aggressive threshold (2.0), less than the moderate (3.0, ITE) and passive (4.0) ones."""
    sim = make(LIGHTS)
    green_end = 100.0 - 3.0 - 2.0  # slot of road a: C/2 minus yellow and all-red
    while sim.time_s < green_end - 1e-9:
        sim.step(DT)
    lane = sim.network.lane_index("a_f")
    line = sim.network.net.lane_f[lane, LF_LEN] - 3.0
    i = sim.spawn(lane, line - 25.0 - 0.5 * sim.agent_size_m[0], speed=11.0, profile=profile)
    for _ in range(int(10 / DT)):
        sim.step(DT)
    entered = sim.store.ai[lay.AI_LANE, i] != lane
    assert entered == goes
    if not goes:
        assert sim.store.af[lay.AF_S, i] + 0.5 * sim.store.af[lay.AF_LENGTH, i] <= line


@pytest.mark.parametrize("profile, v_min_range", [(ag.AGGRESSIVE, (12.0, 99.0)),
                                                  (ag.MODERATE, (1.0, 2.5)),
                                                  (ag.PASSIVE, (0.0, 0.4))])
def test_stop_sign_on_an_empty_junction(profile, v_min_range):
    """004: aggressive does not slow down, moderate reduces speed, passive stops."""
    sim = make([{"id": "st", "kind": "stop", "lanes": ["c_f"]}])
    lane = sim.network.lane_index("c_f")
    i = sim.spawn(lane, 150.0, speed=13.0, profile=profile)
    v_min = 99.0
    while sim.store.ai[lay.AI_LANE, i] == lane and sim.time_s < 60.0:
        sim.step(DT)
        v_min = min(v_min, sim.store.af[lay.AF_U, i])
    assert sim.store.ai[lay.AI_LANE, i] != lane  # everyone eventually crosses
    assert v_min_range[0] <= v_min <= v_min_range[1]


@pytest.mark.parametrize("profile, passive", [(ag.PASSIVE, True), (ag.MODERATE, False)])
def test_only_passive_drivers_slow_at_zebra_crossings(profile, passive):
    sim = make([{"id": "z", "kind": "crossing", "lanes": ["long_f"], "distance_from_end_m": 500}],
               streets=[_street("long", 0, 0, 0.0, 1200)], nodes=[])
    desired = sim.p.passive.speed_factor * 13.89 if passive else 13.89
    i = sim.spawn(0, 100.0, speed=desired, profile=profile)
    v_at = None
    while sim.store.af[lay.AF_S, i] < 700.0 - 0.5 * sim.agent_size_m[0]:
        sim.step(DT)
        v_at = sim.store.af[lay.AF_U, i]
    factor = sim.p.passive.crossing_speed_factor if passive else 1.0
    assert v_at == pytest.approx(factor * desired, abs=0.3)


def test_the_profiles_keep_their_values_and_the_class_defaults_are_the_moderate_driver():
    """The three profiles' values (golden, in field order; they were once built positionally),
    and DriverProfile() is MODERATE: one source for the moderate driver (and the ego's
    parameters, core.ego.params)."""
    from dataclasses import astuple

    from vehicle_sim.core.traffic.params import AGGRESSIVE, MODERATE, PASSIVE, DriverProfile
    assert MODERATE == DriverProfile()
    assert astuple(AGGRESSIVE) == (0.8, 3.0, 0.08, 1.5, 2.0, 0.8, 1.5, 1.1, 2.8, 2.0, 3.0, 13.0,
                                   13.0, True, 1.0, 0.0)
    assert astuple(MODERATE) == (1.0, 4.0, 0.05, 1.0, 1.5, 1.0, 2.0, 1.0, 2.0, 3.0, 1.0, 2.0,
                                 4.0, False, 1.0, 0.0)
    assert astuple(PASSIVE) == (1.2, 5.0, 0.03, 0.8, 1.2, 1.5, 2.5, 0.9, 1.5, 4.0, 0.0, 0.3, 0.3,
                                False, 0.6, 0.0)
