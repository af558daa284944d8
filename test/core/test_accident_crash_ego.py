"""The ego's crash forces inside its integration (issue 11): EgoContacts' wrench applied through
the real vehicle models' set_external_wrench at the 1 kHz physics step."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from vehicle_sim.core.accident import detect
from vehicle_sim.core.accident.crash_params import crash_class_index
from vehicle_sim.core.accident.ego_contacts import (
    HAND_OVER_MARGIN_M,
    AgentArrays,
    EgoBody,
    EgoContacts,
    planar_motion,
)
from vehicle_sim.core.traffic.mapfile import StaticObject
from vehicle_sim.core.vehicle.factory import make_model
from vehicle_sim.core.vehicle.interface import Controls
from vehicle_sim.core.vehicle.params import load_vehicle

VEHICLES = Path(__file__).resolve().parents[2] / "config" / "vehicles"
CAR = load_vehicle(VEHICLES / "medium_car.yaml")
DT = 1e-3
WALL = StaticObject(id="wall", kind="barrier",
                    footprint=((20.0, -5.0), (20.5, -5.0), (20.5, 5.0), (20.0, 5.0)))
TREE = StaticObject(id="oak", kind="tree", x_m=20.4, y_m=0.0, radius_m=0.4)


def drive(model, contacts, seconds, agents=None, controls=None):
    """Run the model at 1 kHz with the crash wrench; returns (snapshots, contact reports)."""
    snaps, reports = [], []
    controls = controls or Controls()
    for k in range(round(seconds / DT)):
        snap = model.snapshot()
        w = contacts.wrench(round(k * DT * 1e9), snap, DT, agents)
        model.set_external_wrench(w.force_n, w.point_m)
        model.step(controls, DT)
        snaps.append(model.snapshot())
        reports += w.contacts
    return snaps, reports


def front_x(snap):
    return snap.position_m[0] + 0.5 * CAR.chassis.length_m * math.cos(snap.rpy_rad[2])


@pytest.mark.parametrize("kind", ["single_track", "full14", "kinematic"])
def test_ego_into_a_barrier_at_10_mps_stops_at_the_barrier(kind):
    model = make_model(kind, CAR, "rk4")
    model.reset(20.0 - 0.5 * CAR.chassis.length_m - 2.0, 0.0, 0.0, 10.0)
    contacts = EgoContacts([WALL], EgoBody.from_vehicle(CAR))
    snaps, reports = drive(model, contacts, 1.5)
    assert max(front_x(s) for s in snaps) < 20.0 + 0.1  # a few cm of crush, never through
    end = snaps[-1]
    assert abs(end.velocity_mps[0]) < 0.3
    assert front_x(end) > 20.0 - 0.5  # at the barrier, no large rebound
    first = [r for r in reports if r.first]
    assert len(first) == 1 and first[0].b_static == 0 and first[0].a_part == detect.PART_FRONT
    impulse = sum(r.impulse_ns for r in reports)
    assert impulse == pytest.approx(CAR.chassis.mass_kg * 10.0, rel=0.25)
    impact = sum(r.impact_impulse_ns for r in reports)
    assert impact == pytest.approx(CAR.chassis.mass_kg * 10.0, rel=0.25)


def test_ego_at_15_mps_into_a_tree_never_ends_on_the_far_side():
    model = make_model("single_track", CAR, "rk4")
    model.reset(20.0 - 0.5 * CAR.chassis.length_m - 3.0, 0.0, 0.0, 15.0)
    contacts = EgoContacts([TREE], EgoBody.from_vehicle(CAR))
    snaps, reports = drive(model, contacts, 2.0, controls=Controls(throttle=0.3))
    assert max(front_x(s) for s in snaps) < 20.0 + 0.1
    assert max(s.position_m[0] for s in snaps) < 20.4  # the CG never passes the tree
    # pushing on at rest adds contact impulse but no impact impulse (no damage)
    assert sum(r.impulse_ns for r in reports) > 1.2 * sum(r.impact_impulse_ns for r in reports)
    assert sum(r.impact_impulse_ns for r in reports) == pytest.approx(
        CAR.chassis.mass_kg * 15.0, rel=0.25)


def test_ego_into_a_standing_agent_is_pushed_back_and_the_agent_side_is_hit():
    model = make_model("single_track", CAR, "rk4")
    model.reset(0.0, -6.0, 0.5 * math.pi, 8.0)  # heading north towards the agent's right side
    agents = AgentArrays(ids=np.array([7]), stamp_ns=np.array([0]),
                         pose=np.array([[0.0, 0.0, 0.0]]), vel=np.zeros((1, 3)),
                         size=np.array([[4.3, 1.7]]),
                         crash_class=np.array([crash_class_index("medium")]))
    contacts = EgoContacts([], EgoBody.from_vehicle(CAR))
    snaps, reports = drive(model, contacts, 1.0, agents=agents)
    assert reports and reports[0].b_id == 7
    assert (reports[0].a_part, reports[0].b_part) == (detect.PART_FRONT, detect.PART_RIGHTSIDE)
    # the agent is immovable for the ego: the ego stops at its side (0.85 m from its CG)
    assert max(s.position_m[1] + 0.5 * CAR.chassis.length_m for s in snaps) < -0.85 + 0.1
    assert abs(snaps[-1].velocity_mps[0]) < 0.2 * 8.0  # plastic: little rebound


def test_a_barrier_drawn_as_a_line_is_a_wall():
    line = StaticObject(id="line", kind="barrier", footprint=((-15.0, -15.0), (-15.0, 15.0)))
    model = make_model("single_track", CAR, "rk4")
    model.reset(-6.0, 1.0, math.pi, 10.0)
    contacts = EgoContacts([line], EgoBody.from_vehicle(CAR))
    snaps, reports = drive(model, contacts, 1.5)
    fronts = [s.position_m[0] - 0.5 * CAR.chassis.length_m for s in snaps]
    assert min(fronts) > -15.0 + 0.25 - 0.1 and reports


def test_nothing_near_gives_no_force_and_no_contact():
    contacts = EgoContacts([WALL, TREE], EgoBody.from_vehicle(CAR))
    model = make_model("single_track", CAR, "rk4")
    model.reset(-100.0, 0.0, 0.0, 10.0)
    w = contacts.wrench(0, model.snapshot(), DT, AgentArrays.empty())
    assert not w.contacts and not np.any(w.force_n)


@pytest.mark.parametrize("overlap_m", [0.1, 0.4])
def test_an_agent_placed_into_the_resting_ego_does_not_launch_it(overlap_m):
    """New traffic arrays put an agent 0.1-0.4 m into the side of the ego at rest (a catch-up,
    a respawn): no closing motion made that overlap, so its spring energy is not given back."""
    model = make_model("single_track", CAR, "rk4")
    model.reset(0.0, 0.0, 0.0, 0.0)
    y = 0.5 * CAR.chassis.width_m + 0.5 * 1.7 - overlap_m  # the agent beside the ego, in it
    contacts = EgoContacts([], EgoBody.from_vehicle(CAR))
    snaps, reports = drive(model, contacts, 0.5, agents=_agent(5, 0.0, y, 0.0, 0.0, 0),
                           controls=Controls(brake=0.0))
    assert reports and reports[0].b_id == 5
    assert max(math.hypot(*s.velocity_mps[:2]) for s in snaps) < 0.1, "the ego was launched"


def test_planar_wrench_sign_and_moment():
    model = make_model("single_track", CAR, "rk4")
    model.reset(0.0, 0.0, 0.0, 10.0)
    # a push to the left (+y) at the front bumper turns the car left and moves it left
    model.set_external_wrench((0.0, 20000.0, 0.0), (2.0, 0.0, 0.0))
    for _ in range(50):
        model.step(Controls(gear=0), DT)
    s = model.snapshot()
    assert s.angular_velocity_radps[2] > 0.1 and s.position_m[1] > 0.01
    with pytest.raises(ValueError, match="finite"):
        model.set_external_wrench((math.nan, 0.0, 0.0))


@pytest.mark.parametrize("kind", ["single_track", "full14"])
def test_planar_motion_from_the_state_matches_the_snapshot(kind):
    model = make_model(kind, CAR, "rk4")
    model.reset(3.0, -2.0, 0.7, 12.0)
    for _ in range(200):
        model.step(Controls(steer_rad=0.1, throttle=0.3), DT)
    position, yaw, velocity = planar_motion(model)
    snap = model.snapshot()
    assert np.allclose(position[:2], snap.position_m[:2]) and yaw == pytest.approx(snap.rpy_rad[2])
    assert np.allclose(velocity, (snap.velocity_mps[0], snap.velocity_mps[1],
                                  snap.angular_velocity_radps[2]), atol=0.02)


def _agent(agent_id: int, x: float, y: float, yaw: float, speed: float, t_ns: int):
    c, s = math.cos(yaw), math.sin(yaw)
    return AgentArrays(ids=np.array([agent_id]), stamp_ns=np.array([t_ns]),
                       pose=np.array([[x, y, yaw]]), vel=np.array([[c * speed, s * speed, 0.0]]),
                       size=np.array([[4.3, 1.7]]),
                       crash_class=np.array([crash_class_index("medium")]))


NOBODY = AgentArrays.empty()
# (start x [m], speed [m/s], agents at step k and t_ns (None: keep the arrays), the contact)
SKIP_CASES = {
    # arrays replaced only at the extrapolation bound: a crossing agent at 25 m/s into the side
    # of a creeping ego (the agents' motion must count in the margin)
    "crossing agent": (-8.0, 1.0, lambda k, t_ns: _agent(
        3, -5.0, -66.4 + 25.0 * k * DT, 0.5 * math.pi, 25.0, t_ns) if k % 200 == 0 else None,
                       "b_id=3"),
    # 20 m/s into the wall from 6 m before it (the ego's own motion must count)
    "into the wall": (20.0 - 0.5 * CAR.chassis.length_m - 6.0, 20.0,
                      lambda k, t_ns: NOBODY if k == 0 else None, "b_static=0"),
    # new arrays put an agent against the side of a creeping ego (new arrays end the margin)
    "new arrays": (-8.0, 1.0, lambda k, t_ns: NOBODY if k == 0 else _agent(
        4, -7.0, -1.4, 0.0, 0.0, t_ns) if k == 1500 else None, "b_id=4"),
}


@pytest.mark.parametrize("case", SKIP_CASES)
def test_skipping_the_broad_phase_while_nothing_is_near_changes_no_step(monkeypatch, case):
    """Steps after one that found nothing near, even CLEAR_MARGIN_M wider, skip the broad phase
    while the ego and the agents stay inside that margin (core.accident.clear_margin). Each run
    with the skip gives exactly the wrenches and reports of the full test at every step."""
    from vehicle_sim.core.accident import ego_contacts
    x0, speed, agents_at, contact = SKIP_CASES[case]

    def run():
        model = make_model("single_track", CAR, "rk4")
        model.reset(x0, 0.0, 0.0, speed)
        contacts = EgoContacts([WALL, TREE], EgoBody.from_vehicle(CAR))
        out, skipped, agents = [], 0, None
        for k in range(round(3.0 / DT)):
            t_ns = round(k * DT * 1e9)
            agents = agents_at(k, t_ns) or agents
            skipped += contacts._clear is not None
            w = contacts.wrench(t_ns, model.snapshot(), DT, agents)
            out.append((w.force_n.tobytes(), w.point_m.tobytes(), repr(w.contacts)))
            model.set_external_wrench(w.force_n, w.point_m)
            model.step(Controls(), DT)
        return out, skipped

    with_skip, skipped = run()
    monkeypatch.setattr(ego_contacts.EgoContacts, "_look_wider", lambda self, *a: None)
    full, none_skipped = run()
    assert skipped > 100 and none_skipped == 0, "the skip was taken (and is off in the 2nd run)"
    assert any(contact in step[2] for step in full), f"the run has its contact ({contact})"
    assert with_skip == full


def test_the_physics_gets_only_the_agents_that_can_reach_the_ego():
    """AgentArrays.near: an agent stays if its distance is within both speeds times the
    horizon, the two bounding radii and the margin; a 3,000-agent set shrinks to those (the
    set once filled the physics process's request pipe and the loop was killed)."""
    n = 3000
    rng = np.random.default_rng(1)
    xy = rng.uniform(-800.0, 800.0, (n, 2))
    speed = rng.uniform(0.0, 15.0, n)
    agents = AgentArrays.from_columns(np.arange(n), np.zeros(n), xy[:, 0], xy[:, 1],
                                      np.zeros(n), speed, np.zeros(n), np.zeros(n),
                                      np.full(n, 4.5), np.full(n, 1.8), np.zeros(n, int))
    ego_r, horizon = 2.5, 0.5
    near = agents.near(10.0, -5.0, 20.0, ego_r, horizon)
    reach = (20.0 + speed) * horizon + ego_r + 0.5 * math.hypot(4.5, 1.8) + HAND_OVER_MARGIN_M
    want = np.flatnonzero(np.hypot(xy[:, 0] - 10.0, xy[:, 1] + 5.0) <= reach)
    assert 0 < len(want) < 50 and np.array_equal(near.ids, want)
    assert np.array_equal(near.pose, agents.pose[want])
    assert np.array_equal(near.vel, agents.vel[want]) and len(near.size) == len(want)
