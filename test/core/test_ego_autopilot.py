"""The ego autopilot (004 driver laws) driving the single-track vehicle model over urban_grid."""
from __future__ import annotations

import dataclasses
import itertools
import math
from pathlib import Path

import numpy as np
import pytest

from vehicle_sim.core.ego.autopilot import Autopilot
from vehicle_sim.core.ego.params import EgoDriverParams
from vehicle_sim.core.ego.route import Route
from vehicle_sim.core.traffic.lights import GREEN, RED, LightController
from vehicle_sim.core.traffic.mapfile import load_map
from vehicle_sim.core.traffic.network import Network
from vehicle_sim.core.traffic.params import LightParams
from vehicle_sim.core.vehicle.factory import make_model
from vehicle_sim.core.vehicle.interface import Controls
from vehicle_sim.core.vehicle.params import load_vehicle

CONFIG = Path(__file__).resolve().parents[2] / "config"
PHYSICS_DT_S = 0.002  # 500 Hz physics, 50 Hz control (every 10th step)
CONTROL_EVERY = 10
START = (10.0, -1.75, 0.0)  # 1 m into lane h0_0_f0 (starts at x = 9, y = -1.75, heading east)


@pytest.fixture(scope="module")
def network():
    return Network(load_map(CONFIG / "maps" / "urban_grid.yaml"))


@pytest.fixture(scope="module")
def vehicle():
    return load_vehicle(CONFIG / "vehicles" / "medium_car.yaml")


def drive(network, vehicle, t_end_s, start=START, lights=None, agents=None, params=None):
    """Closed loop; returns per control step rows t, x, y, u, lane, s, lateral, reference,
    yaw."""
    ap = Autopilot(network, vehicle, params or EgoDriverParams())
    model = make_model("single_track", vehicle, "rk4")
    model.reset(*start)
    if agents is not None:
        ap.set_agents(agents)
    log, cmd = [], None
    for k in range(round(t_end_s / PHYSICS_DT_S)):
        t = k * PHYSICS_DT_S
        if k % CONTROL_EVERY == 0:
            snap = model.snapshot()
            x, y, yaw = snap.position_m[0], snap.position_m[1], snap.rpy_rad[2]
            u = snap.velocity_mps[0]
            if lights is not None:
                ap.set_lights(lights(t, x, y, yaw))
            cmd = ap.update(t, x, y, yaw, u)
            log.append((t, x, y, u, ap.route.lane, cmd.s_m, cmd.lateral_m, cmd.reference, yaw))
        model.step(Controls(steer_rad=cmd.steer_rad, throttle=cmd.throttle, brake=cmd.brake,
                            gear=cmd.gear), PHYSICS_DT_S)
    return ap, log


def light_stop_lines(network, lane):
    """(s of the stop line [m], light name) of the lights on a lane."""
    return [(sg.s_m, sg.light) for sg in network.signals(lane) if sg.kind == "traffic_light"]


def test_drives_the_city_for_120_s_on_its_lane_within_limits_and_stops_at_red(network, vehicle):
    ctl = LightController(network, LightParams())
    states_now = {}

    def lights(t, x, y, yaw):
        ctl.select_master(x, y, yaw)
        states_now.clear()
        states_now.update(zip(network.light_names, ctl.states(t).tolist()))
        return dict(states_now)

    ap = Autopilot(network, vehicle, EgoDriverParams())
    half = 0.5 * vehicle.chassis.length_m
    model = make_model("single_track", vehicle, "rk4")
    model.reset(*START)
    travelled, prev, red_stops, cmd = 0.0, None, 0, None
    worst_lat, worst_over, worst_turn = 0.0, -math.inf, 0.0
    for k in range(round(120.0 / PHYSICS_DT_S)):
        t = k * PHYSICS_DT_S
        if k % CONTROL_EVERY == 0:
            snap = model.snapshot()
            x, y, yaw, u = (snap.position_m[0], snap.position_m[1], snap.rpy_rad[2],
                            snap.velocity_mps[0])
            ap.set_lights(lights(t, x, y, yaw))
            cmd = ap.update(t, x, y, yaw, u)
            lane = ap.route.lane
            if ":" not in network.lane_names[lane]:  # street lanes are straight in urban_grid
                worst_lat = max(worst_lat, abs(cmd.lateral_m))
            else:  # junction turns (10 m radius and less)
                worst_turn = max(worst_turn, abs(cmd.lateral_m))
            worst_over = max(worst_over, u - network.speed_limit(lane))
            for s_line, name in light_stop_lines(network, lane):
                bumper = cmd.s_m + half
                if prev is not None and prev[0] == lane and prev[1] < s_line <= bumper:
                    assert states_now[name] != RED, f"ran the red light {name} at t={t:.2f} s"
                if states_now[name] == RED and u < 0.05 and 0.0 < s_line - bumper < 3.0:
                    red_stops += 1
            if prev is not None:
                travelled += math.hypot(x - prev[2], y - prev[3])
            prev = (lane, cmd.s_m + half, x, y)
        model.step(Controls(steer_rad=cmd.steer_rad, throttle=cmd.throttle, brake=cmd.brake,
                            gear=cmd.gear), PHYSICS_DT_S)
    assert worst_lat < 1.0  # m from the lane centre on the straight street lanes
    assert worst_turn < 1.0  # m in junction turns (1.4 m with 004's look-ahead uncapped)
    assert worst_over < 1.0  # m/s above the lane speed limit
    assert travelled > 400.0  # it drove through the city (13.9 m/s limit, lights, stops)
    assert red_stops > 0  # it waited at a red light at least once, just before the line
    assert ap.route.first > 4  # passed several lanes and junctions


def test_stops_before_a_red_light_and_goes_on_green(network, vehicle):
    lane = network.lane_index("h1_0_f0")  # runs east from (9, 98.25) to a lit junction
    (s_line, _), = light_stop_lines(network, lane)
    x_line = 9.0 + s_line

    def lights(t, x, y, yaw):
        return {n: (RED if t < 40.0 else GREEN) for n in network.light_names}

    _, log = drive(network, vehicle, 55.0, start=(10.0, 98.25, 0.0), lights=lights)
    half = 0.5 * vehicle.chassis.length_m
    t = np.array([r[0] for r in log])
    x = np.array([r[1] for r in log])
    u = np.array([r[3] for r in log])
    waiting = (t > 30.0) & (t < 40.0)
    assert np.all(u[waiting] < 0.05)  # stopped
    gap = x_line - (x[waiting] + half)  # front bumper before the stop line [m]
    assert np.all(gap > 0.0) and np.all(gap < 2.5)  # stop_margin_m 1.0 + creep tolerance
    assert np.all(x[t < 40.0] + half < x_line)  # never past the line while red
    assert x[-1] + half > x_line + 10.0  # went on after green


@pytest.mark.parametrize("vehicle_file", ["vehicles/medium_car.yaml", "vehicles/truck.yaml"])
def test_stops_fully_at_a_stop_sign_as_the_report_checks_and_goes_on(network, vehicle_file):
    """One "full stop" law: the ego's stop at a stop sign (default stop_sign_speed_mps, the
    report's FULL_STOP_MPS) passes the run report's own check on its states, for a car and a
    7.5 m truck (the report's zone from the ego's length), and it then drives on."""
    from vehicle_sim.core.ego.full_stop import FULL_STOP_MPS
    from vehicle_sim.report.lanes import load_lanes, stop_lines
    from vehicle_sim.report.metrics import ego_length_m, stop_signs_not_stopped
    assert EgoDriverParams().stop_sign_speed_mps == FULL_STOP_MPS
    sign = "stop1_2:h2_0_f0"  # lane h2_0_f0 runs east from (9, 198.25) to a stop line at x = 91
    lanes, spec, _ = load_lanes("maps/urban_grid.yaml")
    line = stop_lines(lanes, spec)[sign]
    ego = load_vehicle(CONFIG / vehicle_file)
    _, log = drive(network, ego, 35.0, start=(10.0, 198.25, 0.0))
    t, x, y, u, yaw = (np.array([r[k] for r in log]) for k in (0, 1, 2, 3, 8))
    zero = np.zeros_like(t)
    state = np.column_stack((t, x, y, yaw, u, zero, zero, zero, zero))  # the report's columns
    assert "stop_sign" in {r[7] for r in log}
    assert u[x < line[0]].min() < FULL_STOP_MPS  # it stopped before the line ...
    assert x.max() > line[0] + 20.0  # ... and went on (no wait or creep at the sign)
    length, note = ego_length_m(vehicle_file)
    assert length == pytest.approx(ego.chassis.length_m) and not note
    assert stop_signs_not_stopped(state, {sign: line}, length) == []
    rolling = dataclasses.replace(EgoDriverParams(), stop_sign_speed_mps=0.3)  # the old value
    _, log = drive(network, ego, 35.0, start=(10.0, 198.25, 0.0), params=rolling)
    state = np.array([(r[0], r[1], r[2], r[8], r[3], 0, 0, 0, 0) for r in log])
    assert [v["sign"] for v in stop_signs_not_stopped(state, {sign: line}, length)] == [sign]


def test_starts_off_the_lane_at_the_origin_and_joins_it(network, vehicle):
    _, log = drive(network, vehicle, 15.0, start=(0.0, 0.0, 0.0))
    assert network.lane_names[log[0][4]] == "h0_0_f0"  # nearest lane heading east
    late = [r for r in log if r[0] > 10.0]
    assert all(abs(r[6]) < 0.3 for r in late)  # on the centre line after 10 s
    assert late[-1][1] > 40.0


def test_follows_a_stopped_car_and_stops_behind_it(network, vehicle):
    length, width = 4.5, 1.8
    x_agent = 70.0
    agents = np.array([[x_agent, -1.75, 0.0, 0.0, length, width],  # stopped in our lane
                       [40.0, 1.75, math.pi, 0.0, length, width]])  # in the opposite lane
    _, log = drive(network, vehicle, 30.0, agents=agents)
    half = 0.5 * vehicle.chassis.length_m
    gaps = np.array([x_agent - 0.5 * length - (r[1] + half) for r in log])
    assert gaps.min() > 0.5  # never touched it
    assert gaps[-1] < EgoDriverParams().min_gap_m + 2.0  # IDM s0 = 2 m, stopped close
    assert abs(log[-1][3]) < 0.05
    assert log[-1][7] == "leader"


def test_route_follows_the_exit_probabilities_with_its_seed(network):
    lane = network.lane_index("h0_0_f0")
    routes = [Route(network, lane, np.random.default_rng(seed), 3000.0).lanes
              for seed in (1, 1, 2, 3, 4)]
    assert routes[0] == routes[1]
    assert len({tuple(r) for r in routes}) > 2
    for r in routes:
        for a, b in itertools.pairwise(r):  # each step is a successor of the map
            assert b in network.successors(a)[0].tolist()
        assert sum(network.lane_length(ln) for ln in r) >= 3000.0


def test_a_reset_of_the_vehicle_restarts_the_route(network, vehicle):
    ap = Autopilot(network, vehicle, EgoDriverParams())
    for k in range(5):
        ap.update(0.02 * k, 40.0 + 0.2 * k, -1.75, 0.0, 10.0)
    assert network.lane_names[ap.route.lane] == "h0_0_f0"
    cmd = ap.update(0.0, 201.75, 150.0, math.pi / 2, 0.0)  # back to t = 0, another pose
    assert cmd.lane == "v2_1_f0" and abs(cmd.lateral_m) < 1e-6  # north-bound lane at x = 201.75


def test_bad_inputs_are_refused(network, vehicle):
    ap = Autopilot(network, vehicle, EgoDriverParams())
    with pytest.raises(ValueError, match="non-finite"):
        ap.update(0.0, math.nan, 0.0, 0.0, 0.0)
    with pytest.raises(ValueError, match="no lane within"):
        ap.update(0.0, 5000.0, 5000.0, 0.0, 0.0)


def test_the_ego_takes_the_moderate_drivers_law_parameters():
    """core.ego.params reads its driver-law values from traffic MODERATE (one source); the
    stop-sign speed differs on purpose (a full stop, see its doc)."""
    from vehicle_sim.core.traffic.params import MODERATE
    ego = EgoDriverParams()
    shared = {"lookahead_time_s": "lookahead_time_s", "lookahead_min_m": "lookahead_min_m",
              "steer_d_gain_s": "steer_d_gain_s", "accel_max_mps2": "accel_mean_mps2",
              "accel_d_gain_s": "accel_d_gain_s", "comfort_decel_mps2": "comfort_decel_mps2",
              "time_headway_s": "time_headway_s", "min_gap_m": "min_gap_m",
              "lateral_accel_mps2": "lateral_accel_mps2",
              "yellow_stop_decel_mps2": "yellow_stop_decel_mps2",
              "give_way_speed_mps": "give_way_speed_mps"}
    for ego_name, profile_name in shared.items():
        assert getattr(ego, ego_name) == getattr(MODERATE, profile_name), ego_name
    assert ego.stop_sign_speed_mps < MODERATE.stop_sign_speed_mps


@pytest.mark.parametrize("d_gain_s", [0.0, 0.3])
def test_the_ego_and_the_agents_share_one_pedal_law(network, vehicle, d_gain_s):
    """The ego's acceleration is the agents' (driver_law.pedal_accel, as kernels.step calls it:
    the previous step's a_r, the driver's a_m and c_d/c_p, the tyre mu), with a derivative gain
    too: a_r above a_m, rising and falling, braking beyond mu g."""
    from vehicle_sim.core.traffic.kernels import driver_law
    params = dataclasses.replace(EgoDriverParams(), accel_d_gain_s=d_gain_s)
    ap = Autopilot(network, vehicle, params)
    mu, dt = vehicle.tyre.friction_coefficient, 0.02
    a_prev = 0.0
    for a_r in (0.2, 0.6, 3.0, 5.0, 2.0, 0.5, -1.0, -30.0, 0.8):
        agent = driver_law.pedal_accel(a_r, a_prev, dt, params.accel_max_mps2, d_gain_s, mu)
        assert ap._accel(a_r, dt) == agent
        a_prev = a_r
    if d_gain_s > 0.0:  # the derivative term acts, and the result stays within mu g
        assert driver_law.pedal_accel(3.0, 0.5, dt, 1.0, d_gain_s, mu) == pytest.approx(
            min(1.0 + d_gain_s * (1.0 / 3.0) * 2.5 / dt, mu * 9.80665))
