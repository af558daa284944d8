"""Scripted accident vehicles: 002's plans driven through the single-track model by paper 000's
PD servo; the planned collisions happen in the simulation (AccidentDetector over the boxes).

Tolerance 1.5 m (the issue's): 002 places the vehicles exactly touching at the planned time, so
the servo's tracking error decides where the boxes first overlap; a third of a car length keeps
the hit on the planned part. Measured: < 0.3 m at the planned times, contacts within 0.8 m.
"""
import math
from pathlib import Path

import numpy as np
import pytest

from vehicle_sim.core.accident.detect import PART_NAMES, AccidentDetector, Body
from vehicle_sim.core.accident.planners.plan import plan_accident
from vehicle_sim.core.accident.scripted import ScriptedFleet
from vehicle_sim.core.accident.template import load_template
from vehicle_sim.core.vehicle.params import load_vehicle

ROOT = Path(__file__).resolve().parents[2]
VEHICLES = {"car": load_vehicle(ROOT / "config" / "vehicles" / "medium_car.yaml"),
            "truck": load_vehicle(ROOT / "config" / "vehicles" / "truck.yaml")}
SIZES = {k: (v.chassis.length_m, v.chassis.width_m) for k, v in VEHICLES.items()}
DT_S = 0.01  # the traffic node's step (100 Hz)


def run(name: str, origin=(0.0, 0.0), heading=0.0):
    """Drive a template's plan to its end + 1 s; record poses at the planned collision times
    and the detector's contacts (vehicle boxes and static trees as square bodies)."""
    plan = plan_accident(load_template(ROOT / "config" / "accidents" / f"{name}.yaml"), SIZES)
    fleet = ScriptedFleet(plan, VEHICLES, origin_m=origin, heading_rad=heading)
    c, s = math.cos(heading), math.sin(heading)
    trees = [Body(o.id, origin[0] + c * o.x_m - s * o.y_m, origin[1] + s * o.x_m + c * o.y_m,
                  0.0, 2 * o.radius_m, 2 * o.radius_m) for o in plan.scene.objects]
    detector, contacts, at_planned = AccidentDetector(), [], {}
    planned = fleet.collisions
    steps = round((fleet.lead_in_s + plan.duration_s + 1.0) / DT_S)
    for _ in range(steps):
        for col in planned:
            if abs(fleet.time_s - col.time_s) < 0.5 * DT_S:
                at_planned[col.index] = fleet.state()
        fleet.step(DT_S)
        st = fleet.state()
        bodies = [Body(n, st.x_m[i], st.y_m[i], st.yaw_rad[i], st.length_m[i], st.width_m[i],
                       st.vx_mps[i], st.vy_mps[i], st.yaw_rate_radps[i])
                  for i, n in enumerate(st.names)]
        contacts += detector.update(round(fleet.time_s * 1e9), bodies + trees)
    return fleet, planned, at_planned, contacts


@pytest.fixture(scope="module", params=["a4", "rear_end_chain"])
def driven(request):
    return request.param, run(request.param)


def test_each_vehicle_reaches_its_planned_collision_position_at_the_planned_time(driven):
    _, (fleet, planned, at_planned, _) = driven
    assert set(at_planned) == {c.index for c in planned}
    for col in planned:
        st = at_planned[col.index]
        for who, pose in ((col.actor, col.actor_pose), (col.victim, col.victim_pose)):
            if pose is None:
                continue
            i = st.names.index(who)
            err = math.hypot(st.x_m[i] - pose[0], st.y_m[i] - pose[1])
            assert err < 1.5, f"{who} at collision {col.index}: {err:.2f} m off"


def test_the_planned_collisions_happen_in_order_with_the_planned_parts(driven):
    """Detected contacts (first contact of each planned pair) in the planned order, with the
    planned actor, victim and parts (a tree has none: 'unknown'), within 1.5 m of the planned
    contact point and 0.3 s of the planned time."""
    name, (_, planned, _, contacts) = driven
    pairs = {frozenset((c.actor, c.victim)): c for c in reversed(contacts)}
    order = []
    for col in planned:
        got = pairs.get(frozenset((col.actor, col.victim)))
        assert got is not None, f"{name}: collision {col.index} never happened"
        assert (got.actor, got.victim) == (col.actor, col.victim)
        assert PART_NAMES[got.actor_part] == col.actor_part
        if col.victim_pose is not None:
            assert PART_NAMES[got.victim_part] == col.victim_part
        assert math.dist(got.position_m, col.position_m) < 1.5
        assert abs(got.t_ns * 1e-9 - col.time_s) < 0.3
        assert got.impact_speed_mps > 0.3  # driven into, not grazed
        order.append(got.t_ns)
    assert order == sorted(order)
    planned_pairs = {frozenset((c.actor, c.victim)) for c in planned}
    assert all(frozenset((c.actor, c.victim)) in planned_pairs for c in contacts)


def test_a4_in_a_shifted_and_rotated_map_frame_is_the_same_scene():
    fleet, planned, _, contacts = run("a4", origin=(100.0, -50.0), heading=0.5)
    assert [(c.actor, c.victim) for c in contacts] == [(p.actor, p.victim) for p in planned]
    for got, col in zip(contacts, planned, strict=True):
        assert math.dist(got.position_m, col.position_m) < 1.5


def test_a_vehicle_handed_over_is_no_longer_driven():
    fleet = ScriptedFleet.from_template(
        load_template(ROOT / "config" / "accidents" / "a4.yaml"), VEHICLES)
    for _ in range(100):
        fleet.step(DT_S)
    fleet.hand_over("vehicleA")
    before = fleet.state()
    for _ in range(50):
        fleet.step(DT_S)
    after = fleet.state()
    a, b = before.names.index("vehicleA"), before.names.index("vehicleB")
    assert not after.driving[a] and after.driving[b]
    assert (after.x_m[a], after.y_m[a], after.yaw_rad[a]) == (
        before.x_m[a], before.y_m[a], before.yaw_rad[a])
    assert after.x_m[b] - before.x_m[b] > 2.0
    with pytest.raises(KeyError, match="no scripted vehicle 'ghost'"):
        fleet.hand_over("ghost")


def test_runs_repeat_exactly():
    states = []
    for _ in range(2):
        plan = plan_accident(load_template(ROOT / "config" / "accidents" / "a4.yaml"), SIZES)
        fleet = ScriptedFleet(plan, VEHICLES)
        for _ in range(200):
            fleet.step(DT_S)
        st = fleet.state()
        states.append(np.concatenate([st.x_m, st.y_m, st.yaw_rad, st.vx_mps]).tobytes())
    assert states[0] == states[1]


def test_bad_steps_are_refused():
    plan = plan_accident(load_template(ROOT / "config" / "accidents" / "a4.yaml"), SIZES)
    fleet = ScriptedFleet(plan, VEHICLES)
    for bad in (0.0, -0.01, float("nan"), 5.0):
        with pytest.raises(ValueError, match="dt_s must be"):
            fleet.step(bad)
