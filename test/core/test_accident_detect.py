"""Contact geometry of the accident detector (004 sec. 7.1 detection, 002 collision parts)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from vehicle_sim.core.accident.detect import (
    PART_FRONT,
    PART_LEFTSIDE,
    PART_REAR,
    PART_RIGHTSIDE,
    PART_UNKNOWN,
    AccidentDetector,
    Body,
    contact,
    impact_part,
    overlap_centre,
)

L, W = 4.298, 1.674  # medium_car box [m]
T0 = 12_340_000_000


def car(name, x, y, yaw, speed=0.0, yaw_rate=0.0, length=L, width=W):
    return Body(name, x, y, yaw, length, width, speed * math.cos(yaw), speed * math.sin(yaw),
                yaw_rate)


def test_head_on_is_front_front_with_the_sum_of_speeds():
    a = car("ego", 0.0, 0.0, 0.0, speed=10.0)
    b = car("agent/7", L - 0.2, 0.0, math.pi, speed=5.0)  # 0.2 m overlap of the bumpers
    c = contact(a, b, T0, 0.1)
    assert (c.actor, c.victim) == ("ego", "agent/7")  # the faster one hits
    assert (c.actor_part, c.victim_part) == (PART_FRONT, PART_FRONT)
    assert c.impact_speed_mps == pytest.approx(15.0, abs=1e-9)
    assert c.relative_velocity_mps == pytest.approx((15.0, 0.0), abs=1e-9)
    # middle of the 0.2 m x W overlap
    assert c.position_m == pytest.approx((0.5 * L - 0.1, 0.0), abs=1e-9)
    assert c.t_ns == T0


@pytest.mark.parametrize("side, expected", [(+1.0, PART_RIGHTSIDE), (-1.0, PART_LEFTSIDE)])
def test_t_bone_front_into_side(side, expected):
    victim = car("agent/2", 0.0, 0.0, 0.0, speed=3.0)
    # the actor comes from the victim's right (side +1: from y<0 heading north) and hits its
    # middle 0.15 m deep
    y = -side * (0.5 * W + 0.5 * L - 0.15)
    actor = car("ego", 0.0, y, side * 0.5 * math.pi, speed=8.0)
    c = contact(victim, actor, T0, 0.1)
    assert (c.actor, c.victim) == ("ego", "agent/2")
    assert (c.actor_part, c.victim_part) == (PART_FRONT, expected)
    assert c.impact_speed_mps == pytest.approx(8.0, abs=1e-9)  # victim moves across the normal
    assert c.position_m[1] == pytest.approx(-side * (0.5 * W - 0.075), abs=1e-9)


def test_rear_end_front_into_rear_with_closing_speed():
    leader = car("agent/1", 0.0, 0.0, 0.3, speed=4.0)
    c0, s0 = math.cos(0.3), math.sin(0.3)
    gap = L - 0.1  # follower 0.1 m into the leader's rear, lateral offset 0.5 m
    follower = car("agent/2", -gap * c0 - 0.5 * -s0, -gap * s0 - 0.5 * c0, 0.3, speed=9.0)
    c = contact(leader, follower, T0, 0.1)
    assert (c.actor, c.victim) == ("agent/2", "agent/1")
    assert (c.actor_part, c.victim_part) == (PART_FRONT, PART_REAR)
    assert c.impact_speed_mps == pytest.approx(5.0, abs=1e-6)


def test_a_corner_hit_takes_the_face_the_normal_leaves_through():
    a = car("a", 0.0, 0.0, 0.0, speed=5.0)
    # b's rear-right corner overlaps a's front-left corner, 0.3 m deep along x, 0.5 m along y:
    # equidistant from a's front and left faces, the least penetration is along x
    b = car("b", L - 0.3, W - 0.5, 0.0)
    c = contact(a, b, T0, 0.1)
    assert (c.actor_part, c.victim_part) == (PART_FRONT, PART_REAR)
    corner = np.array([a.x_m + 0.5 * L - 0.1, a.y_m + 0.5 * W - 0.1])
    assert impact_part(a, corner, 0.1) == PART_UNKNOWN  # no normal: ambiguous
    assert impact_part(a, corner, 0.1, np.array([0.2, 0.9])) == PART_LEFTSIDE


def test_near_miss_spheres_overlap_boxes_do_not():
    a = car("a", 0.0, 0.0, 0.0)
    b = car("b", 0.0, W + 0.05, 0.0)  # side by side, 5 cm apart: spheres overlap widely
    assert math.hypot(0.0, W + 0.05) < math.hypot(L, W)
    assert contact(a, b, T0, 0.1) is None
    # b turned 45 deg ahead of a's front, its nearest corner 5 cm from a's bumper
    reach = (L + W) / (2.0 * math.sqrt(2.0))  # half extent of the turned box along x
    b2 = car("c", 0.5 * L + reach + 0.05, 0.0, math.pi / 4)
    assert b2.x_m < math.hypot(L, W)  # bounding spheres (r = diagonal / 2 each) overlap
    assert contact(a, b2, T0, 0.1) is None
    assert AccidentDetector().update(T0, [a, b, b2]) == []


def test_overlap_centre_of_rotated_square():
    a = Body("a", 0.0, 0.0, 0.0, 2.0, 2.0)
    b = Body("b", 1.0, 1.0, math.pi / 4, 2.0, 2.0)
    p = overlap_centre(a, b)
    # symmetric about the line y = x and inside a's top-right quadrant
    assert p[0] == pytest.approx(p[1], abs=1e-9)
    assert 0.0 < p[0] < 1.0


def test_rotation_of_the_spin_adds_point_velocity():
    # b spins about its centre at 1 rad/s; the contact point at its front bumper moves sideways
    a = car("a", 0.0, 0.0, 0.0)
    b = car("b", L - 0.2, 0.0, math.pi, yaw_rate=1.0)
    c = contact(a, b, T0, 0.1)
    # point 0.5 L - 0.1 behind b's centre along -x: omega x r = (0, -(0.5 L - 0.1))
    rel = np.array(c.relative_velocity_mps)
    assert abs(rel[1]) == pytest.approx(0.5 * L - 0.1, abs=1e-9)


def test_one_event_per_episode_and_a_new_one_after_release():
    det = AccidentDetector(release_s=0.5)
    ego = car("ego", 0.0, 0.0, 0.0, speed=5.0)
    other = car("agent/3", L - 0.1, 0.0, math.pi)
    apart = car("agent/3", L + 1.0, 0.0, math.pi)
    dt = 10_000_000  # 100 Hz
    events = []
    for k in range(30):  # 0.3 s in contact
        events += det.update(T0 + k * dt, [ego, other])
    assert len(events) == 1 and events[0].t_ns == T0
    for k in range(30, 60):  # 0.3 s apart < release: same episode
        events += det.update(T0 + k * dt, [ego, apart])
    events += det.update(T0 + 60 * dt, [ego, other])
    assert len(events) == 1
    for k in range(61, 130):  # 0.69 s apart > release
        events += det.update(T0 + k * dt, [ego, apart])
    assert det.active_pairs == set()
    events += det.update(T0 + 130 * dt, [ego, other])
    assert len(events) == 2 and events[1].t_ns == T0 + 130 * dt


def test_only_with_filters_agent_pairs_and_bad_input_is_refused():
    det = AccidentDetector()
    a1, a2 = car("agent/1", 0.0, 0.0, 0.0), car("agent/2", 1.0, 0.0, 0.0)
    ego = car("ego", 50.0, 0.0, 0.0)
    assert det.update(T0, [ego, a1, a2], only_with="ego") == []
    assert len(det.update(T0, [ego, a1, a2])) == 1
    with pytest.raises(ValueError, match="non-finite"):
        det.update(T0, [car("x", math.nan, 0.0, 0.0), ego])


def test_statics_are_checked_in_their_own_pass():
    """A building's size does not coarsen the vehicles' grid; a car into a tree is a contact,
    a car beside a building is not."""
    tree = Body("static/tree", 10.0, 0.0, 0.0, 0.8, 0.8)
    building = Body("static/bldg", 0.0, 60.0, 0.0, 100.0, 100.0)  # south face at y = 10
    d = AccidentDetector()
    far = car("a", 0.0, 0.0, 0.0, speed=5.0)
    assert d.update(T0, [far], statics=[tree, building]) == []
    hit = car("a", 10.0 - 0.5 * L + 0.1, 0.0, 0.0, speed=5.0)
    (c,) = d.update(T0 + 10**8, [hit], statics=[tree, building])
    assert (c.actor, c.victim, c.actor_part) == ("a", "static/tree", PART_FRONT)
    assert c.impact_speed_mps == pytest.approx(5.0)
