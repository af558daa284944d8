"""The crash world (004 sec. 7): planar rigid bodies joined by 004's spring-dampers at the contact
point, pybullet narrow phase, sub-models only for pairs in contact. Physical checks of issue 11."""
from __future__ import annotations

import math

import numpy as np
import pytest

from vehicle_sim.core.accident import detect
from vehicle_sim.core.accident.crash_bodies import DYNAMIC, PRESCRIBED, BodyArrays
from vehicle_sim.core.accident.crash_params import CrashParams, crash_class_index
from vehicle_sim.core.accident.crash_world import CrashWorld
from vehicle_sim.core.traffic.mapfile import StaticObject
from vehicle_sim.core.vehicle.params import load_vehicle
from vehicle_sim.paths import config_path

_CAR = load_vehicle(config_path("vehicles/medium_car.yaml")).chassis
L, W, M, IZ = _CAR.length_m, _CAR.width_m, _CAR.mass_kg, _CAR.yaw_inertia_kgm2
MEDIUM = crash_class_index("medium")
DT = 0.01


def bodies(rows, modes=None):
    """rows: (x, y, yaw, speed, yaw_rate) of medium cars with ids 1..n."""
    n = len(rows)
    r = np.array(rows, dtype=float)
    vel = np.column_stack((r[:, 3] * np.cos(r[:, 2]), r[:, 3] * np.sin(r[:, 2]), r[:, 4]))
    return BodyArrays(ids=np.arange(1, n + 1), mode=np.array(modes or [DYNAMIC] * n),
                      pose=r[:, :3].copy(), vel=vel, size=np.tile([L, W], (n, 1)),
                      mass_kg=np.full(n, M), yaw_inertia_kgm2=np.full(n, IZ),
                      crash_class=np.full(n, MEDIUM))


def advance(world, b, steps, dt=DT, t0_ns=0):
    """Run the world, writing its states back as the traffic node would; without contact and
    not crashed, bodies move at constant velocity (b is updated in place). Yields each CrashStep."""
    for k in range(steps):
        out = world.step(t0_ns + round(k * dt * 1e9), dt, b)
        moved = set()
        for i, s in zip(out.ids, out.states, strict=True):
            row = int(np.flatnonzero(b.ids == i)[0])
            b.pose[row], b.vel[row] = s[:3], s[3:]
            moved.add(row)
        for row in range(len(b.ids)):
            if row not in moved:
                b.pose[row] += b.vel[row] * dt
        yield out


def kinetic_energy(b):
    dyn = b.mode == DYNAMIC
    return float((0.5 * b.mass_kg * (b.vel[:, 0] ** 2 + b.vel[:, 1] ** 2) +
                  0.5 * b.yaw_inertia_kgm2 * b.vel[:, 2] ** 2)[dyn].sum())


def box(b, row):
    return detect.Body(str(row), *b.pose[row], L, W)


def test_head_on_keeps_momentum_and_does_not_interpenetrate():
    world = CrashWorld()
    b = bodies([(-2.2, 0.0, 0.0, 10.0, 0.0), (2.2, 0.0, math.pi, 10.0, 0.0)])
    p0 = M * 10.0  # each car's momentum magnitude [kg m/s]
    seen_contact, after = False, None
    for out in advance(world, b, 100, dt=1e-3):
        if out.contacts:
            seen_contact = True
            assert {(c.a_part, c.b_part) for c in out.contacts} <= {
                (detect.PART_FRONT, detect.PART_FRONT)}
        elif seen_contact and after is None:
            after = b.vel.copy()
    assert seen_contact and after is not None
    total = M * (after[0, :2] + after[1, :2])
    assert np.hypot(*total) < 0.05 * p0
    assert abs(after[0, 0]) < 2.0 and abs(after[1, 0]) < 2.0  # a plastic crash: nearly stopped
    depth, _ = detect.separation(box(b, 0), box(b, 1))
    assert depth < 0.03


def test_rear_end_contact_itself_keeps_total_momentum():
    # the soft rear (004: R_o ~ 4e3 N s/m) makes a long contact (~0.1 s); the sliding friction of
    # the crashed cars is an external force, so it is nearly switched off here
    world = CrashWorld(params=CrashParams(road_friction=1e-3))
    b = bodies([(-4.4, 0.0, 0.0, 10.0, 0.0), (0.0, 0.0, 0.0, 0.0, 0.0)])
    p0 = M * 10.0
    seen, after = False, None
    for out in advance(world, b, 400, dt=1e-3):
        if out.contacts:
            seen = True
        elif seen:
            after = b.vel.copy()
            break
    assert after is not None
    total = M * (after[0, :2] + after[1, :2])
    assert abs(np.hypot(*total) - p0) < 0.05 * p0
    assert after[1, 0] > 3.0  # the victim was pushed forward
    assert after[1, 0] >= after[0, 0] - 0.05  # and moves away from the striking car


def test_kinetic_energy_never_grows_through_an_oblique_contact():
    world = CrashWorld()
    b = bodies([(-4.0, -1.0, 0.3, 12.0, 0.0), (0.0, 0.0, 2.0, 6.0, 0.2)])
    ke = [kinetic_energy(b)]
    touched = 0
    for out in advance(world, b, 600, dt=1e-3):
        touched += bool(out.contacts)
        ke.append(kinetic_energy(b))
    assert touched > 0
    grow = np.diff(ke)
    assert grow.max() <= 1e-6 * ke[0]
    assert ke[-1] < 0.9 * ke[0]


@pytest.mark.parametrize("overlap_m", [0.05, 0.32, 0.8])
@pytest.mark.parametrize("dt", [0.05, 1e-3])
def test_a_body_placed_into_a_resting_car_gives_it_no_energy(overlap_m, dt):
    """A late pose (the ego after a traffic catch-up), a respawn: the overlap was made by no
    closing motion, so its spring energy K d^2 / 2 is not given back (a 0.32 m overlap
    launched the car at 18 m/s); a prescribed body that then drives on into it gives it at
    most what an elastic bounce would: twice its speed (004's soft rear bounces: ~2.6 m/s)."""
    world = CrashWorld()
    b = bodies([(0.0, 0.0, 0.0, 0.0, 0.0), (L - overlap_m, 0.3, 0.0, 0.0, 0.0)],
               modes=[PRESCRIBED, DYNAMIC])
    for _ in advance(world, b, round(0.5 / dt), dt=dt):
        assert kinetic_energy(b) < 1.0  # [J]: at rest, touched
    b.vel[0, 0] = 1.5  # the placed body drives on into it
    peak = 0.0
    for _ in advance(world, b, round(1.0 / dt), dt=dt):
        peak = max(peak, float(np.hypot(*b.vel[1, :2])))
    assert 1.5 < peak <= 2 * 1.5


def test_a_pair_that_parts_by_a_jump_meets_again_afresh():
    """A pair's contact state (tangential stretch, set) belongs to its episode: moved away (not
    even a candidate pair any more) it is forgotten, and driven back into the car the body
    meets the spring afresh (004's soft rear: ~0.19 m deep at 3 m/s)."""
    world = CrashWorld()
    b = bodies([(0.0, 0.0, 0.0, 0.0, 0.0), (L - 0.3, 0.3, 0.0, 0.0, 0.0)],
               modes=[PRESCRIBED, DYNAMIC])
    for _ in advance(world, b, 10, dt=0.05):
        pass
    assert len(world._springs) == 1
    b.pose[0, 0] = -50.0  # a jump away (a pose set by hand)
    for _ in advance(world, b, 2, dt=0.05):
        pass
    assert world._springs == {}
    b.pose[0, 0], b.vel[0, 0] = b.pose[1, 0] - L - 0.5, 3.0  # back, closing at 3 m/s
    deepest = 0.0
    for _ in advance(world, b, 40, dt=0.01):
        deepest = max(deepest, detect.separation(box(b, 0), box(b, 1))[0])
    assert 0.1 < deepest < 0.25 and b.vel[1, 0] > 1.0


def test_side_impact_turns_the_victim_away_from_the_striking_front():
    # B stands heading east; A comes from the south heading north and hits B's right side
    # ahead of B's CG: B is pushed north at a point ahead of its CG, it must turn left (+yaw).
    world = CrashWorld()
    b = bodies([(1.3, -0.5 * W - 0.5 * L - 0.05, 0.5 * math.pi, 10.0, 0.0),
                (0.0, 0.0, 0.0, 0.0, 0.0)])
    parts = set()
    for out in advance(world, b, 300, dt=1e-3):
        for c in out.contacts:
            parts.add((c.a_part, c.b_part))
    assert (detect.PART_FRONT, detect.PART_RIGHTSIDE) in parts
    assert b.vel[1, 2] > 0.05 or b.pose[1, 2] > 0.02  # turned counter-clockwise
    assert b.pose[1, 1] > 0.1  # pushed north
    assert 2 in world.crashed and 1 in world.crashed


BARRIER = StaticObject(id="wall", kind="barrier",
                       footprint=((10.0, -5.0), (10.5, -5.0), (10.5, 5.0), (10.0, 5.0)))
TREE = StaticObject(id="oak", kind="tree", x_m=10.4, y_m=0.0, radius_m=0.4)


@pytest.mark.parametrize("obstacle,face_m,speed", [(BARRIER, 10.0, 10.0), (TREE, 10.0, 15.0)])
def test_car_into_a_static_object_stops_there_and_never_passes(obstacle, face_m, speed):
    world = CrashWorld([obstacle])
    b = bodies([(face_m - 0.5 * L - 1.0, 0.0, 0.0, speed, 0.0)])
    first = []
    for out in advance(world, b, 400, dt=1e-2):
        first += [c for c in out.contacts if c.first]
        front = b.pose[0, 0] + 0.5 * L * math.cos(b.pose[0, 2])
        assert front < face_m + 0.1  # never through (a few cm of crush at most)
    assert len(first) == 1 and first[0].b_static == 0 and first[0].a_part == detect.PART_FRONT
    assert np.hypot(*b.vel[0, :2]) < 0.1  # stopped
    assert b.pose[0, 0] + 0.5 * L > face_m - 1.0  # at the obstacle, not bounced far away
    assert first[0].impulse_ns > 0.5 * M * speed * 0.5
    # at rest at it: at most one narrow-phase query per step (touching and at rest: none; a gap:
    # one distance query, then the step is jumped over), no new contact
    calls = []
    orig = world.geometry.vehicle_static
    world.geometry.vehicle_static = lambda *a, **k: calls.append(a) or orig(*a, **k)
    for out in advance(world, b, 50, dt=1e-2, t0_ns=4_000_000_000):
        assert not [c for c in out.contacts if c.first]
    assert len(calls) <= 50


def test_only_pairs_in_contact_get_the_sub_model():
    world = CrashWorld()
    rows = [(-2.2, 0.0, 0.0, 10.0, 0.0), (2.2, 0.0, math.pi, 10.0, 0.0)]
    rows += [(50.0 * k, 30.0, 0.0, 10.0, 0.0) for k in range(20)]  # far apart, in a column
    b = bodies(rows)
    queried = []
    geo = world.geometry
    orig = geo.vehicle_pair

    def counting(a, c, reach_m=0.0):
        queried.append(tuple(sorted((a.name, c.name))))
        return orig(a, c, reach_m)

    geo.vehicle_pair = counting
    vv, vs = world.candidates(b, DT)
    assert [tuple(p) for p in vv] == [(0, 1)] and len(vs) == 0
    out = world.step(0, DT, b)
    assert set(queried) == {("1", "2")}
    assert set(out.ids.tolist()) <= {1, 2}


def test_prescribed_body_moves_as_given_and_pushes_the_dynamic_one():
    world = CrashWorld()
    b = bodies([(-4.4, 0.0, 0.0, 10.0, 0.0), (0.0, 0.0, 0.0, 0.0, 0.0)],
               modes=[PRESCRIBED, DYNAMIC])
    for _ in advance(world, b, 50, dt=1e-2):
        b.vel[0] = (10.0, 0.0, 0.0)  # the ego keeps driving (its own physics)
    assert b.vel[1, 0] > 5.0
    assert 1 not in world.crashed and 2 in world.crashed


def test_bad_body_is_one_clear_error():
    world = CrashWorld()
    b = bodies([(0.0, 0.0, 0.0, float("nan"), 0.0), (9.0, 0.0, 0.0, 0.0, 0.0)])
    with pytest.raises(ValueError, match="body id 1"):
        world.step(0, DT, b)


def test_offset_head_on_is_point_symmetric():
    # two equal cars, offset 0.6 m, at 20 Hz steps: the configuration is symmetric under a half
    # turn, so both must end with the same yaw rate (both clockwise: each is hit on its right)
    world = CrashWorld()
    b = bodies([(-2.6, 0.3, 0.0, 10.0, 0.0), (2.6, -0.3, math.pi, 10.0, 0.0)])
    out = world.step(0, 0.05, b)
    assert len(out.contacts) == 1
    r = out.states[:, 5]
    assert r[0] < -0.1 and r[1] == pytest.approx(r[0], rel=0.05)
    assert np.allclose(out.states[0, 3:5], -out.states[1, 3:5], atol=1e-6)
