"""The columnar detector (detect_arrays) against the per-pair reference it replaced: the same
contacts, in the same order, with the same numbers bit for bit, over a crowded scene where
episodes open, last and release, bodies come and go, and cars hit static objects."""
from __future__ import annotations

import math

import numpy as np
import pytest

from vehicle_sim.core.accident.detect import AccidentDetector, Body, Contact, contact
from vehicle_sim.core.accident.detect_arrays import Bodies
from vehicle_sim.core.traffic.collisions import overlapping_pairs

DT_NS = 10_000_000  # 100 Hz
EGO_ID = -1
EGO_W = 0.6  # yaw rate of the ego's circle [rad/s]


class ReferenceDetector:
    """The detector before issue 14: a Body per body, the previous sample by name (a static
    object's: itself), every candidate pair in Python (kept here as the oracle)."""

    def __init__(self, release_s: float = 0.5, part_margin_m: float = 0.1):
        self.release_ns, self.part_margin_m = round(release_s * 1e9), part_margin_m
        self.last_seen: dict[tuple[str, str], int] = {}
        self.before: dict[str, Body] = {}

    def update(self, t_ns, bodies, only_with=None, statics=()):
        arr = np.array([(b.x_m, b.y_m, b.yaw_rad, b.length_m, b.width_m) for b in bodies])
        cell = max(1.0, float(np.hypot(arr[:, 3], arr[:, 4]).max()))
        pairs = [(bodies[i], bodies[j]) for i, j in overlapping_pairs(
            *(arr[:, k].copy() for k in range(5)), cell)]
        if statics:
            r = 0.5 * np.hypot(arr[:, 3], arr[:, 4])
            st = np.array([(o.x_m, o.y_m, 0.5 * (o.length_m * abs(math.cos(o.yaw_rad))
                                                 + o.width_m * abs(math.sin(o.yaw_rad))),
                            0.5 * (o.length_m * abs(math.sin(o.yaw_rad))
                                   + o.width_m * abs(math.cos(o.yaw_rad)))) for o in statics])
            near = (np.abs(arr[:, None, 0] - st[None, :, 0]) <= r[:, None] + st[None, :, 2]) & \
                (np.abs(arr[:, None, 1] - st[None, :, 1]) <= r[:, None] + st[None, :, 3])
            pairs += [(bodies[i], statics[j]) for i, j in zip(*np.nonzero(near), strict=True)]
        new = []
        for a, b in pairs:
            if only_with is not None and only_with not in (a.name, b.name):
                continue
            key = tuple(sorted((a.name, b.name)))
            seen = {**{o.name: o for o in statics}, **self.before}  # a static stays put
            before = (seen.get(a.name), seen.get(b.name))
            c = contact(a, b, t_ns, self.part_margin_m,
                        None if None in before or key in self.last_seen else before)
            if c is None:
                continue
            if key not in self.last_seen:
                new.append(c)
            self.last_seen[key] = int(t_ns)
        self.last_seen = {k: t for k, t in self.last_seen.items() if t_ns - t < self.release_ns}
        self.before = {b.name: b for b in bodies}
        return new


def name_of(body_id: int) -> str:
    return "ego" if body_id == EGO_ID else f"agent/{body_id}"


def crowd(n: int, steps: int = 300, seed: int = 5):
    """Per update: (ids, (8, n) state) of the ego and the agents present; agents drive in
    random directions on a 60 m square with yaw rates, one in five is absent at times; the ego,
    a 12 m bus, drives a 14 m circle through them and past the tree."""
    rng = np.random.default_rng(seed)
    x0, y0 = rng.uniform(0.0, 60.0, n), rng.uniform(0.0, 60.0, n)
    yaw0, w = rng.uniform(-np.pi, np.pi, n), rng.uniform(-0.5, 0.5, n)
    speed, size = rng.uniform(0.0, 8.0, n), rng.uniform([3.0, 1.5], [6.0, 2.3], (n, 2))
    speed[0], w[0], size[0] = 14.0 * EGO_W, EGO_W, (12.0, 2.6)
    ids = np.concatenate([[EGO_ID], rng.choice(10_000, n - 1, replace=False)])
    for k in range(steps):
        t = k * DT_NS * 1e-9
        yaw = yaw0 + w * t
        x = (x0 + speed * np.cos(yaw0) * t) % 60.0  # wraps: bodies jump, pairs come and go
        y = (y0 + speed * np.sin(yaw0) * t) % 60.0
        yaw[0] = 3.4 + EGO_W * t  # on the circle about (30, 30), the tree (20, 20) at 3.93
        x[0], y[0] = 30.0 + 14.0 * np.sin(yaw[0]), 30.0 - 14.0 * np.cos(yaw[0])
        present = (np.arange(n) % 5 != 0) | ((k // 40 + np.arange(n)) % 2 == 0)
        present[0] = True
        state = np.vstack([x, y, yaw, size[:, 0], size[:, 1], speed * np.cos(yaw),
                           speed * np.sin(yaw), w])[:, present]
        yield k * DT_NS, ids[present], state


STATICS = [Body("static/tree", 20.0, 20.0, 0.0, 0.8, 0.8),
           Body("static/wall", 40.0, 10.0, 0.7, 12.0, 0.5),
           Body("static/bldg", 50.0, 50.0, 0.0, 8.0, 6.0)]


def as_bodies(ids, state) -> list[Body]:
    return [Body(name_of(int(i)), *state[:, r].tolist()) for r, i in enumerate(ids)]


def exact(c: Contact) -> tuple:
    """Every field, the floats as hex (bit for bit, -0.0 apart from 0.0)."""
    return (c.t_ns, c.actor, c.victim, c.actor_part, c.victim_part,
            *(float.hex(v) for v in (c.impact_speed_mps, *c.relative_velocity_mps,
                                     *c.position_m)))


@pytest.mark.parametrize("only_with, statics", [("ego", STATICS), (None, STATICS), ("ego", [])])
def test_columns_and_bodies_give_the_reference_contacts_bit_for_bit(only_with, statics):
    ref, by_list, by_columns = ReferenceDetector(), AccidentDetector(), AccidentDetector()
    found = [0, 0]  # contacts, of them with a static
    for t_ns, ids, state in crowd(80 if only_with else 50):  # every pair: fewer
        bodies = as_bodies(ids, state)
        expected = [exact(c) for c in ref.update(t_ns, bodies, only_with, statics)]
        assert [exact(c) for c in by_list.update(t_ns, bodies, only_with, statics)] == expected
        columns = Bodies(ids, name_of, state)
        assert [exact(c) for c in by_columns.update_arrays(t_ns, columns, only_with,
                                                           statics)] == expected
        assert by_list.active_pairs == by_columns.active_pairs == set(ref.last_seen)
        found[0] += len(expected)
        found[1] += sum("static/" in c[1] + c[2] for c in expected)
    assert found[0] >= (40 if only_with is None else 8)  # the scene tests something
    assert found[1] >= (1 if statics else 0)


def test_columns_refuse_a_bad_body_by_name():
    state = np.array([[0.0, 5.0], [0.0, 0.0], [0.0, 0.0], [4.0, 4.0], [2.0, 0.0],
                      [0.0, 0.0], [0.0, 0.0], [0.0, 0.0]])  # agent/7 has no width
    with pytest.raises(ValueError, match="agent/7.*empty box"):
        AccidentDetector().update_arrays(0, Bodies([EGO_ID, 7], name_of, state))
    state[4, 1], state[0, 0] = 2.0, math.inf
    with pytest.raises(ValueError, match="'ego': non-finite"):
        AccidentDetector().update_arrays(0, Bodies([EGO_ID, 7], name_of, state))


def test_body_lists_with_ever_new_names_keep_their_episodes():
    """update() numbers the names it sees and forgets those gone (bounded): a pair in contact
    throughout is reported once while thousands of passing names come and go."""
    ego = Body("ego", 0.0, 0.0, 0.0, 4.0, 2.0, 5.0)
    other = Body("agent/1", 3.9, 0.0, math.pi, 4.0, 2.0)
    det, ref, found, expected = AccidentDetector(), ReferenceDetector(), [], []
    for k in range(1200):  # > 1024 names: some are forgotten
        bodies = [ego, Body(f"agent/p{k}", 100.0 + k, 0.0, 0.0, 4.0, 2.0), other]
        expected += [exact(c) for c in ref.update(k * DT_NS, bodies)]
        found += [exact(c) for c in det.update(k * DT_NS, bodies)]
    assert found == expected and len(found) == 1 and found[0][1:3] == ("ego", "agent/1")
