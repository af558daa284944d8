"""The instructor of 004 sec. 7 on the traffic agents (provoke, red light, full brake, cut-in,
stop in lane; target selection) and the crashed-agent API for an outside crash integrator."""
import math

import numpy as np
import pytest

from test.core.test_traffic_driver import _lane, _street, crossing_map, sim_on
from vehicle_sim.core.traffic import agents as ag
from vehicle_sim.core.traffic.instructor import InstructionError
from vehicle_sim.core.traffic.kernels import layout as lay
from vehicle_sim.core.traffic.mapfile import map_from_dict
from vehicle_sim.core.traffic.network import Network
from vehicle_sim.core.traffic.params import TrafficParams, ZoneParams
from vehicle_sim.core.traffic.sim import TrafficSim
from vehicle_sim.core.units import GRAVITY_MPS2

DT = 0.05
Y1, Y2 = -1.75, -5.25  # lane centres of the two-lane road (left, right lane)


def road(two_lanes=False) -> dict:
    lanes = [_lane("r_l", Y1), _lane("r_r", Y2)] if two_lanes else None
    return {"format_version": 1, "streets": [_street("r", 0, 0, 0.0, 2000, lanes=lanes)]}


def uid(sim, slot):
    return int(sim.store.ai[lay.AI_UID, slot])


def run(sim, seconds, ego=None):
    for _ in range(round(seconds / DT)):
        sim.step(DT, ego)


def bumper_gap(sim, i, ego_x):
    """Gap [m] from agent i's front to the rear of the ego ahead of it on the x axis."""
    af = sim.store.af
    return ego_x - af[lay.AF_X, i] - 0.5 * (af[lay.AF_LENGTH, i] + sim.ego_size_m[0])


@pytest.mark.parametrize("provoked", [False, True])
def test_provoked_agent_behind_the_ego_does_not_brake_and_reaches_it(provoked):
    sim = sim_on(road())
    ego = (200.0, Y1, 0.0, 0.0)  # stopped in the lane
    i = sim.spawn(0, 100.0, speed=10.0, profile=ag.MODERATE)
    sim.step(DT, ego)
    if provoked:
        assert sim.select_agent("nearest_behind") == uid(sim, i)
        sim.instruct(uid(sim, i), "provoke_accident")
    worst = 1e9
    for _ in range(round(20 / DT)):
        sim.step(DT, ego)
        worst = min(worst, bumper_gap(sim, i, ego[0]))
        if worst <= 0.0:
            break
    if provoked:
        assert worst <= 0.0  # its box reached the ego's
        assert sim.store.af[lay.AF_U, i] > 8.0  # ... without braking for it
    else:
        assert worst > 1.0 and sim.store.af[lay.AF_U, i] < 0.05


@pytest.mark.parametrize("near_ego", [False, True])
def test_full_brake_decelerates_at_mu_g(near_ego):
    """Kinematic and single-track models alike: the brake law saturates at mu g (004 eq. 13)."""
    sim = sim_on(road())
    i = sim.spawn(0, 100.0, speed=12.0, profile=ag.MODERATE)
    ego = (100.0, 60.0, 0.0, 0.0) if near_ego else None  # within the LOD radius, not in the way
    sim.step(DT, ego)
    sim.instruct(uid(sim, i), "full_brake", until_s=sim.time_s + 0.5)
    u0 = sim.store.af[lay.AF_U, i]
    run(sim, 0.5, ego)
    decel = (u0 - sim.store.af[lay.AF_U, i]) / 0.5
    assert decel == pytest.approx(sim.vehicle.tyre.friction_coefficient * GRAVITY_MPS2, rel=0.02)
    assert sim.store.ai[lay.AI_DYN, i] == (1 if near_ego else 0)
    assert sim.agents()["instruction"][0] == lay.INS_NONE  # until_s elapsed: driving again
    u1 = sim.store.af[lay.AF_U, i]
    run(sim, 2.0, ego)
    assert sim.store.af[lay.AF_U, i] > u1


@pytest.mark.parametrize("runs_red", [False, True])
def test_run_red_light_passes_the_red_stop_line_a_normal_agent_stops_at(runs_red):
    sim = sim_on(crossing_map())
    lane = sim.network.lane_index("c_f")
    names, states = sim.light_states()
    assert states[names.index("tl_c:c_f")] == 2  # red for the first 100 s
    i = sim.spawn(lane, 150.0, speed=10.0, profile=ag.PASSIVE)
    if runs_red:
        sim.instruct(uid(sim, i), "run_red_light")
    run(sim, 30.0)
    assert sim.light_states()[1][names.index("tl_c:c_f")] == 2
    if runs_red:
        assert sim.store.ai[lay.AI_LANE, i] != lane  # through the junction
    else:
        assert sim.store.ai[lay.AI_LANE, i] == lane and sim.store.af[lay.AF_U, i] < 0.05


def test_cut_in_ends_in_the_egos_lane_ahead_of_the_ego():
    sim = sim_on(road(two_lanes=True))
    left, right = sim.network.lane_index("r_l"), sim.network.lane_index("r_r")
    u_ego = 13.89  # the agent's desired speed: no overtaking change of its own on the way
    i = sim.spawn(right, 215.0, speed=u_ego, profile=ag.MODERATE)
    ego_x = 200.0
    sim.step(DT, (ego_x, Y1, 0.0, u_ego))
    assert sim.select_agent("nearest_ahead") == uid(sim, i)
    sim.instruct(uid(sim, i), "cut_in")
    for _ in range(round(8 / DT)):
        ego_x += u_ego * DT
        sim.step(DT, (ego_x, Y1, 0.0, u_ego))
    af = sim.store.af
    assert sim.store.ai[lay.AI_LANE, i] == left
    assert abs(af[lay.AF_Y, i] - Y1) < 0.3  # in the ego's lane
    assert af[lay.AF_X, i] > ego_x  # ahead of the ego
    # refused when the agent is not beside the ego's lane (it is in it now)
    with pytest.raises(InstructionError, match="not in a lane beside"):
        sim.instruct(uid(sim, i), "cut_in")


def test_stop_in_lane_stops_and_stays_then_drives_on_when_it_ends():
    sim = sim_on(road())
    i = sim.spawn(0, 100.0, speed=10.0, profile=ag.MODERATE)
    sim.instruct(uid(sim, i), "stop_in_lane", until_s=30.0)
    run(sim, 15.0)
    af = sim.store.af
    x_stop = af[lay.AF_X, i]
    b = sim.p.moderate.comfort_decel_mps2
    assert af[lay.AF_U, i] == 0.0
    assert x_stop - 100.0 == pytest.approx(10.0 ** 2 / (2 * b), abs=2.0)  # at b
    run(sim, 14.9)
    assert af[lay.AF_X, i] == x_stop  # stays
    run(sim, 5.0)
    assert af[lay.AF_X, i] > x_stop + 1.0  # instruction ended at 30 s


def test_nearest_selectors_pick_the_right_agent():
    sim = sim_on(road(two_lanes=True))
    left, right = sim.network.lane_index("r_l"), sim.network.lane_index("r_r")
    behind = sim.spawn(left, 150.0, speed=0.0)
    ahead = sim.spawn(right, 230.0, speed=0.0)
    sim.spawn(left, 260.0, speed=0.0)
    sim.spawn(left, 100.0, speed=0.0)
    sim.step(DT, (200.0, Y1, 0.0, 0.0))
    assert sim.select_agent("nearest_ahead") == uid(sim, ahead)
    assert sim.select_agent("nearest_behind") == uid(sim, behind)
    with pytest.raises(InstructionError, match="no agent ahead"):
        sim.step(DT, (300.0, Y1, 0.0, 0.0))
        sim.select_agent("nearest_ahead")
    with pytest.raises(InstructionError, match="approaches no junction"):
        sim.select_agent("nearest_crossing")


def test_nearest_crossing_is_on_the_crossing_road_of_the_egos_junction():
    sim = sim_on(crossing_map())
    c, a = sim.network.lane_index("c_f"), sim.network.lane_index("a_f")
    sim.spawn(c, 100.0, speed=0.0)  # far up the crossing road
    near = sim.spawn(c, 250.0, speed=0.0)  # 40 m before the junction
    sim.spawn(a, 270.0, speed=0.0)  # ahead of the ego on its own road: not crossing
    sim.step(DT, (-60.0, -1.75, 0.0, 5.0))
    assert sim.select_agent("nearest_crossing") == uid(sim, near)


def test_bad_instructions_are_refused_with_one_clear_line():
    sim = sim_on(road())
    i = sim.spawn(0, 100.0, speed=5.0)
    with pytest.raises(InstructionError, match="no agent with id 999"):
        sim.instruct(999, "full_brake")
    with pytest.raises(InstructionError, match="unknown instructor action 'fly'"):
        sim.instruct(uid(sim, i), "fly")
    with pytest.raises(InstructionError, match="needs the ego's pose"):
        sim.select_agent("nearest_ahead")
    with pytest.raises(InstructionError, match="unknown agent selector"):
        sim.select_agent("farthest")
    with pytest.raises(InstructionError, match="until_s"):
        sim.instruct(uid(sim, i), "full_brake", until_s=math.nan)


def test_crashed_agent_is_not_moved_and_the_others_brake_for_it():
    sim = sim_on(road())
    crashed = sim.spawn(0, 300.0, speed=10.0)
    follower = sim.spawn(0, 150.0, speed=10.0, profile=ag.MODERATE)
    sim.mark_crashed([uid(sim, crashed)])
    # an outside integrator put it at rest, slewed across its lane (explicit state)
    sim.set_crashed_states([uid(sim, crashed)], [305.0], [-1.0], [0.6], [0.0], [0.0], [0.0])
    st = sim.crashed_states()
    assert st["uid"].tolist() == [uid(sim, crashed)]
    assert (st["x"][0], st["y"][0], st["yaw"][0]) == (305.0, -1.0, 0.6)
    sim.set_crashed_states([uid(sim, crashed)], [305.0], [-1.0], [0.6], [3.0], [1.0], [0.2])
    st = sim.crashed_states()
    assert (st["vx"][0], st["vy"][0], st["yaw_rate"][0]) == pytest.approx((3.0, 1.0, 0.2))
    run(sim, 40.0)
    af = sim.store.af
    assert (af[lay.AF_X, crashed], af[lay.AF_Y, crashed]) == (305.0, -1.0)  # kernel left it
    a = sim.agents()
    assert a["crashed"].tolist() == [True, False]
    assert af[lay.AF_U, follower] < 0.05  # stopped behind it ...
    assert 305.0 - af[lay.AF_X, follower] > 0.5 * af[lay.AF_LENGTH, follower] + 2.0  # ... clear
    with pytest.raises(ValueError, match="not crashed"):
        sim.set_crashed_states([uid(sim, follower)], [0.0], [0.0], [0.0], [0.0], [0.0], [0.0])
    with pytest.raises(ValueError, match="non-finite"):
        sim.set_crashed_states([uid(sim, crashed)], [np.nan], [0.0], [0.0], [0.0], [0.0], [0.0])
    with pytest.raises(ValueError, match="no agent with id 77"):
        sim.mark_crashed([77])
    with pytest.raises(InstructionError, match="has crashed"):
        sim.instruct(uid(sim, crashed), "full_brake")


def test_crashed_agent_is_removed_after_the_timeout_not_by_the_zone():
    params = TrafficParams(spread=0.0, crash_timeout_s=20.0,
                           zone=ZoneParams(density_per_km=1.0))
    sim = TrafficSim(Network(map_from_dict(road())), params, seed=1)
    i = sim.spawn(0, 100.0, speed=0.0)
    sim.mark_crashed([uid(sim, i)])
    x = 100.0
    for _ in range(round(19.5 / DT)):  # the ego drives off: the agent leaves the zone at ~8 s
        x += 10.0 * DT
        sim.step(DT, (x, Y1, 0.0, 10.0))
    assert uid(sim, i) in sim.crashed_states()["uid"].tolist()
    assert not sim.zone.inside((x, Y1, 0.0), np.array([100.0]), np.array([Y1]))[0]
    run(sim, 0.5, (x, Y1, 0.0, 10.0))
    assert len(sim.crashed_states()["uid"]) == 0
    j = sim.spawn(0, x - 20.0, speed=0.0)
    sim.mark_crashed([uid(sim, j)])
    assert sim.clear_crashed() == 1 and len(sim.crashed_states()["uid"]) == 0
