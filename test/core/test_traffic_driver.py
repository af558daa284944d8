"""Driver model of paper 004 sec. 6 with IDM car following: analytic and scenario checks."""
import math

import numpy as np
import pytest

from vehicle_sim.core.traffic import agents as ag
from vehicle_sim.core.traffic.kernels import agent_driver, driver_law
from vehicle_sim.core.traffic.kernels import layout as lay
from vehicle_sim.core.traffic.kernels.layout import AF_YAW, LF_LEN
from vehicle_sim.core.traffic.mapfile import map_from_dict
from vehicle_sim.core.traffic.network import Network
from vehicle_sim.core.traffic.params import LightParams, TrafficParams, ZoneParams
from vehicle_sim.core.traffic.sim import TrafficSim
from vehicle_sim.core.units import GRAVITY_MPS2

G = GRAVITY_MPS2  # the one gravity of the core (units)


def _lane(name, offset=-1.75):
    return {"id": name, "offset_m": offset, "width_m": 3.5, "direction": "forward"}


def _street(name, x, y, h, length, k=0.0, lanes=None):
    return {"id": name, "road": name, "lanes": lanes or [_lane(name + "_f")],
            "reference": {"x_m": x, "y_m": y, "heading_rad": h,
                          "pieces": [{"length_m": length, "curvature_1pm": k}]}}


def crossing_map() -> dict:
    """A signalised crossing of an east-west road (a -> b) and a north-south road (c -> d)."""
    return {"format_version": 1, "streets": [
        _street("a", -300, 0, 0.0, 290), _street("b", 10, 0, 0.0, 300),
        _street("c", 0, 300, -math.pi / 2, 290), _street("d", 0, -10, -math.pi / 2, 300)],
        "nodes": [{"id": "j", "x_m": 0, "y_m": 0, "connections": [
            {"from_lane": "a_f", "to_lane": "b_f", "probability": 1.0},
            {"from_lane": "c_f", "to_lane": "d_f", "probability": 1.0}]}],
        "signals": [{"id": "tl_a", "kind": "traffic_light", "lanes": ["a_f"],
                     "distance_from_end_m": 3.0},
                    {"id": "tl_c", "kind": "traffic_light", "lanes": ["c_f"],
                     "distance_from_end_m": 3.0}]}


def sim_on(data: dict, ego_size_m: tuple[float, float] | None = None, **kw) -> TrafficSim:
    params = TrafficParams(spread=0.0, zone=ZoneParams(enabled=False),
                           lights=LightParams(cycle_s=200.0), **kw)
    return TrafficSim(Network(map_from_dict(data)), params, seed=1, ego_size_m=ego_size_m)


def test_pedal_laws_of_004_eqs_10_to_13():
    mu, a_m = 0.8, 1.2
    assert driver_law.pedal_accel(0.5, 0.5, 0.05, a_m, 0.0, mu) == pytest.approx(0.5)  # eq. 11
    assert driver_law.pedal_accel(3.0, 3.0, 0.05, a_m, 0.0, mu) == pytest.approx(a_m)  # eq. 12
    assert driver_law.pedal_accel(-2.0, -2.0, 0.05, a_m, 0.0, mu) == pytest.approx(-2.0)  # eq. 13
    assert driver_law.pedal_accel(-30.0, -30.0, 0.05, a_m, 0.0, mu) == pytest.approx(-mu * G)


def test_yellow_light_decision_of_004_6_3_3():
    """One decision for agents (junction.classify) and ego (autopilot): stop if u^2 / (2 d) is
    at most the driver's yellow deceleration (11 m/s, 25 m: 2.42 m/s^2)."""
    assert driver_law.stops_at_yellow(11.0, 25.0, 3.0)  # moderate (ITE 3.0): stops
    assert not driver_law.stops_at_yellow(11.0, 25.0, 2.0)  # aggressive: goes
    assert not driver_law.stops_at_yellow(1.0, -2.0, 3.0)  # past the line (d at least 0.1 m)
    assert driver_law.stops_at_yellow(0.0, -2.0, 3.0)  # at rest: stays


def test_idm_is_zero_at_its_equilibrium_gap():
    u, u0, T, s0 = 8.0, 13.89, 1.0, 2.0
    s_e = (s0 + u * T) / math.sqrt(1 - (u / u0) ** 4)
    assert driver_law.idm(u, u0, s_e, 0.0, 1.0, 1.5, T, s0) == pytest.approx(0.0, abs=1e-12)


def test_lookahead_steering_on_an_arc_gives_atan_h_over_r():
    """004 eq. 7 on a circular lane: the look-ahead arc is the lane, delta_P = atan(h / R)."""
    k_ref = 0.02
    data = {"format_version": 1, "streets": [_street("arc", 0, 0, 0.0, 150, k_ref)]}
    sim = sim_on(data)
    i = sim.spawn(0, 20.0, speed=10.0, profile=ag.MODERATE)
    h = sim.vehicle.chassis.wheelbase_m
    yaw = sim.store.af[AF_YAW, i]
    _, delta_p = agent_driver.steering(sim.network.net, sim.store.af, sim.store.ai, i,
                                       math.cos(yaw), math.sin(yaw), 0.05, h, 1.0)
    k_lane = k_ref / (1 + k_ref * 1.75)  # lane 1.75 m outside the reference arc
    assert delta_p == pytest.approx(math.atan(h * k_lane), abs=2e-3)


@pytest.mark.parametrize("profile", [ag.PASSIVE, ag.MODERATE])
def test_agent_stops_before_a_red_light(profile):
    """Stops with the front bumper within 1 m before the stop line and never crosses it."""
    sim = sim_on(crossing_map())
    lane = sim.network.lane_index("c_f")
    i = sim.spawn(lane, 150.0, speed=10.0, profile=profile)
    line = sim.network.net.lane_f[lane, LF_LEN] - 3.0
    names, states = sim.light_states()
    assert states[names.index("tl_c:c_f")] == 2  # red for the first half cycle (100 s)
    worst = -1e9
    for _ in range(int(60 / 0.05)):
        sim.step(0.05)
        worst = max(worst, sim.store.af[lay.AF_S, i] + 0.5 * sim.store.af[lay.AF_LENGTH, i] - line)
    front = sim.store.af[lay.AF_S, i] + 0.5 * sim.store.af[lay.AF_LENGTH, i]
    assert sim.store.af[lay.AF_U, i] < 0.05
    assert line - front == pytest.approx(0.5, abs=0.5)
    assert worst <= 0.0


def test_aggressive_driver_very_close_goes_through_red():
    sim = sim_on(crossing_map())
    lane = sim.network.lane_index("c_f")
    line = sim.network.net.lane_f[lane, LF_LEN] - 3.0
    i = sim.spawn(lane, line - 2.15 - 1.0, speed=9.0, profile=ag.AGGRESSIVE)
    for _ in range(60):
        sim.step(0.05)
    assert sim.store.ai[lay.AI_LANE, i] != lane  # it entered the junction


@pytest.mark.parametrize("ego_size_m", [None, (7.49, 2.4675)])  # the agents' car; truck.yaml
def test_follows_ego_at_the_idm_equilibrium_gap(ego_size_m):
    """Leader (the ego) at 8 m/s: gap -> (s0 + u T) / sqrt(1 - (u/u0)^4) (Treiber 2000), from
    the ego's rear bumper: a truck's is 1.6 m further back than a car's."""
    data = {"format_version": 1, "streets": [_street("long", 0, 0, 0.0, 2000)]}
    sim = sim_on(data, ego_size_m)
    assert sim.ego_size_m == (ego_size_m or sim.agent_size_m)
    i = sim.spawn(0, 100.0, speed=8.0, profile=ag.MODERATE)
    p, vl = sim.p.moderate, 8.0
    ego_x, y = 160.0, -1.75
    for _ in range(int(150 / 0.05)):
        sim.step(0.05, ego=(ego_x, y, 0.0, vl))
        ego_x += vl * 0.05
    af = sim.store.af
    gap = ego_x - af[lay.AF_X, i] - 0.5 * (af[lay.AF_LENGTH, i] + sim.ego_size_m[0])
    u0 = p.speed_factor * 13.89
    s_e = (p.min_gap_m + vl * p.time_headway_s) / math.sqrt(1 - (vl / u0) ** 4)
    assert af[lay.AF_U, i] == pytest.approx(vl, abs=0.05)
    assert gap == pytest.approx(s_e, abs=0.3)
    assert abs(af[lay.AF_Y, i] - y) < 0.05  # single-track model keeps the lane
    assert sim.store.ai[lay.AI_DYN, i] == 1


def test_agent_yields_to_ego_in_the_junction():
    sim = sim_on(crossing_map())
    lane = sim.network.lane_index("a_f")  # green for a_f
    i = sim.spawn(lane, 200.0, speed=8.0, profile=ag.MODERATE)
    for _ in range(int(30 / 0.05)):
        sim.step(0.05, ego=(-1.75, 2.0, -math.pi / 2, 0.0))  # ego stopped in the junction
    assert sim.store.ai[lay.AI_LANE, i] == lane and sim.store.af[lay.AF_U, i] < 0.05
    assert np.isfinite(sim.store.af[:, i]).all()


def test_corridor_gap_projects_the_other_footprint_on_own_axes():
    """The one corridor law of agents and ego: gap to the footprint ahead, none when oncoming
    or beside the corridor (half widths + margin)."""
    own, car = (4.0, 2.0), (4.0, 2.0)
    assert driver_law.corridor_gap(20.0, 0.0, 1.0, own, car, 0.4) == pytest.approx(16.0)
    assert driver_law.corridor_gap(20.0, 0.0, 0.0, own, car, 0.4) == pytest.approx(17.0)  # across
    assert driver_law.corridor_gap(20.0, 0.0, -1.0, own, car, 0.4) == math.inf  # oncoming
    assert driver_law.corridor_gap(-5.0, 0.0, 1.0, own, car, 0.4) == math.inf  # behind
    assert driver_law.corridor_gap(20.0, 2.3, 1.0, own, car, 0.4) < math.inf  # 2.3 <= 1 + 1 + 0.4
    assert driver_law.corridor_gap(20.0, 2.5, 1.0, own, car, 0.4) == math.inf


def test_lookahead_is_capped_at_half_the_curve_radius():
    assert driver_law.lookahead(8.0, 0.01) == (8.0, False)
    assert driver_law.lookahead(8.0, 0.1) == (pytest.approx(5.0), True)  # R = 10 m
    assert driver_law.lookahead(8.0, 1.0)[0] == driver_law.MIN_LOOKAHEAD_M
