"""Paper 002's planners against 002's rules: positions 20 / 26 / 32 m, polylines with arcs and
a trigonometric overtaking curve, circle intersection, collision placement on the middle of the
part, T_i = T_split + (1 - T_split) / (n - 1) (i - 1) (n = 1 handled), stop points."""
import math
from pathlib import Path

import numpy as np
import pytest

from vehicle_sim.core.accident.planners.params import PlannerParams
from vehicle_sim.core.accident.planners.placement import circle_cut, part_middle
from vehicle_sim.core.accident.planners.plan import plan_accident
from vehicle_sim.core.accident.planners.temporal import collision_time
from vehicle_sim.core.accident.template import load_template, template_from_dict

ROOT = Path(__file__).resolve().parents[2] / "config" / "accidents"
SIZES = {"car": (4.298, 1.674), "truck": (7.49, 2.4675)}
CAR_L, CAR_W = SIZES["car"]


def plan_of(name: str):
    return plan_accident(load_template(ROOT / f"{name}.yaml"), SIZES)


def scene(vehicles, collisions, objects=(), **top):
    data = {"format_version": 1, "name": "t", "road": "crossroad", "vehicles": list(vehicles),
            "collisions": list(collisions), "static_objects": list(objects), **top}
    return plan_accident(template_from_dict(data), SIZES)


def car(name, direction, events=("driving_forward",)):
    return {"id": name, "kind": "car", "direction": direction, "events": list(events)}


TREE = {"id": "t", "kind": "tree", "x_m": 30.0, "y_m": 30.0, "radius_m": 0.4}


def hits_tree(actor):
    return {"actor": actor, "actor_part": "front", "victim": "t", "victim_part": "unknown"}


def by_name(plan):
    return {t.vehicle: t for t in plan.trajectories}


def test_position_planner_places_20_26_32_m_on_the_approach_road():
    """Three cars heading east start on the West road at 20, 26, 32 m (lane 1.75 m right of
    the axis); the nearest gets the farthest end (002 sec. 4.2); heading north: South road."""
    cars = [car(f"c{k}", "east") for k in range(3)] + [car("n", "north")]
    plan = scene(cars, [hits_tree("n")], [{**TREE, "x_m": 1.75, "y_m": 40.0}])
    tr = by_name(plan)
    for k, dist in enumerate((20.0, 26.0, 32.0)):
        assert (tr[f"c{k}"].x_m[0], tr[f"c{k}"].y_m[0]) == pytest.approx((-dist, -1.75))
        assert tr[f"c{k}"].yaw0_rad == pytest.approx(0.0)
    ends = [tr[f"c{k}"].x_m[-1] for k in range(3)]
    assert ends == pytest.approx([32.0, 26.0, 20.0])  # everyone travels 52 m
    assert (tr["n"].x_m[0], tr["n"].y_m[0]) == pytest.approx((1.75, -20.0))


def test_turns_are_arcs_into_the_crossing_lane():
    """turn_left from the West road ends northbound on x = +1.75, turn_right southbound on
    x = -1.75; the arc points lie on one circle (002: turns as points on a circular arc)."""
    plan = scene([car("l", "east", ["turn_left"]), car("r", "east", ["turn_right"]),
                  car("x", "west")], [hits_tree("x")], [{**TREE, "x_m": -40.0, "y_m": 1.75}])
    tr = by_name(plan)
    left, right = tr["l"], tr["r"]
    assert left.x_m[-1] == pytest.approx(1.75) and left.y_m[-1] > 7.0
    assert right.x_m[-1] == pytest.approx(-1.75) and right.y_m[-1] < -7.0
    j = PlannerParams().junction_half_m
    on_arc = (left.x_m > -j + 1e-6) & (left.y_m < j - 1e-6)
    radius = np.hypot(left.x_m[on_arc] + j, left.y_m[on_arc] - j)
    assert radius == pytest.approx(j + 1.75)


def test_overtaking_is_a_trigonometric_excursion_of_one_lane():
    p = PlannerParams()
    plan = scene([car("o", "east", ["overtake", "driving_forward"]), car("x", "west")],
                 [hits_tree("x")], [{**TREE, "x_m": -40.0, "y_m": 1.75}])
    o = by_name(plan)["o"]
    run = o.x_m <= -20.0 + p.overtake_length_m + 1e-9
    lateral = o.y_m[run] + 1.75
    s = (o.x_m[run] + 20.0) / p.overtake_length_m
    assert lateral == pytest.approx(3.5 * 0.5 * (1 - np.cos(2 * np.pi * s)), abs=1e-9)
    assert lateral.max() == pytest.approx(3.5) and o.y_m[-1] == pytest.approx(-1.75)


def test_circle_intersection_cuts_at_the_first_segment_inside_the_growing_circle():
    p = PlannerParams()
    line = np.column_stack([np.arange(0.0, 50.0), np.zeros(50)])
    kept = circle_cut(line, np.array([30.0, 3.0]), p)
    # first segment closer than r_init = 15 m: the one ending at x = 30 - sqrt(15^2 - 3^2)
    assert kept[-1, 0] == pytest.approx(math.floor(30 - math.sqrt(15 ** 2 - 9)))
    assert circle_cut(line, np.array([30.0, p.r_max_m + 1.0]), p) is None
    near = circle_cut(line, np.array([30.0, p.r_init_m + 2.0]), p)  # found after growing
    assert near is not None and len(near) > 1


@pytest.mark.parametrize("name", ["a4", "rear_end_chain"])
def test_each_vehicle_touches_the_contact_point_with_the_middle_of_its_part(name):
    """002 sec. 5.3: the contact point is the middle of each participant's part; side hits at
    width/2, front/rear at length/2 from the centre; a tree's contact on its cylinder."""
    plan = plan_of(name)
    radii = {o.id: o.radius_m for o in plan.scene.objects}
    centres = {o.id: (o.x_m, o.y_m) for o in plan.scene.objects}
    for c in plan.collisions:
        contact = np.array(c.position_m)
        assert part_middle(c.actor_pose, c.actor_part, CAR_L, CAR_W) == pytest.approx(contact)
        if c.victim_pose is not None:
            got = part_middle(c.victim_pose, c.victim_part, CAR_L, CAR_W)
            assert got == pytest.approx(contact)
            # actor and victim boxes touch without overlapping (front hits at length/2 etc.)
        else:
            assert math.dist(contact, centres[c.victim]) == pytest.approx(radii[c.victim])
        tr = by_name(plan)[c.actor]
        at = (np.interp(c.time_s, tr.t_s, tr.x_m), np.interp(c.time_s, tr.t_s, tr.y_m))
        assert at == pytest.approx(c.actor_pose[:2])


def test_a4_is_planned_in_enu_from_002s_coordinates():
    """y_axis: south: the collision at 002's (1, 1) is (1, -1) in ENU, B (eastbound, its lane
    at y = -1.75) hits A's left side there, then A (heading about north-east) hits tree1 at
    (5, 5)."""
    plan = plan_of("a4")
    c1, c2 = plan.collisions
    assert c1.position_m == pytest.approx((1.0, -1.0))
    assert c1.actor_pose[2] == pytest.approx(0.0) and c1.victim_pose[2] == pytest.approx(
        math.pi / 2)
    assert math.dist(c2.position_m, (5.0, 5.0)) == pytest.approx(0.4)
    assert 0.0 < c2.actor_pose[2] < math.pi / 2


def test_temporal_planner_follows_002_eq_1_and_handles_one_collision():
    assert [collision_time(i, 3, 0.4) for i in range(3)] == pytest.approx([0.4, 0.7, 1.0])
    assert collision_time(0, 1, 0.8) == 0.8  # n = 1: undefined in 002, T_split here
    for name in ("a4", "rear_end_chain"):
        plan = plan_of(name)
        n, ts = len(plan.collisions), plan.scene.t_split
        for c in plan.collisions:
            want = ts + (1 - ts) / (n - 1) * c.index
            assert c.time_s == pytest.approx(want * plan.duration_s)
    one = scene([car("a", "north")], [hits_tree("a")], [{**TREE, "x_m": 3.0, "y_m": 5.0}],
                t_split=0.6)
    (c,) = one.collisions
    assert c.time_s == pytest.approx(0.6 * one.duration_s)
    a = by_name(one)["a"]  # held at the collision up to the end (stop point)
    assert a.t_s[-1] == pytest.approx(one.duration_s)
    assert (a.x_m[-1], a.y_m[-1]) == pytest.approx((a.x_m[-2], a.y_m[-2]))


def test_time_is_proportional_to_arc_length_before_the_first_collision_and_speed_bounded():
    plan = plan_of("rear_end_chain")
    for tr in plan.trajectories:
        first = min(c.time_s for c in plan.collisions if tr.vehicle in (c.actor, c.victim))
        k = int(np.searchsorted(tr.t_s, first - 1e-9))
        speed = np.hypot(np.diff(tr.x_m[:k + 1]), np.diff(tr.y_m[:k + 1])) / np.diff(
            tr.t_s[:k + 1])
        assert speed == pytest.approx(speed[0])
        assert 0.0 < speed[0] <= plan.scene.speed_mps + 1e-9
    fastest = max(np.hypot(np.diff(t.x_m[:3]), np.diff(t.y_m[:3])).sum() / t.t_s[2]
                  for t in plan.trajectories)
    assert fastest == pytest.approx(plan.scene.speed_mps)


@pytest.mark.parametrize("name, stopped", [("a4", "vehicleB"), ("rear_end_chain", "car1")])
def test_vehicles_that_miss_the_last_collision_get_a_stop_point(name, stopped):
    plan = plan_of(name)
    tr = by_name(plan)[stopped]
    last_own = max(c.time_s for c in plan.collisions if stopped in (c.actor, c.victim))
    assert last_own < plan.duration_s - 1e-6
    assert tr.t_s[-2] == pytest.approx(last_own) and tr.t_s[-1] == pytest.approx(
        plan.duration_s)
    assert (tr.x_m[-1], tr.y_m[-1]) == (tr.x_m[-2], tr.y_m[-2])
    for t in plan.trajectories:
        assert np.all(np.diff(t.t_s) > 0.0) and t.t_s[0] == 0.0


def test_a_standing_victim_is_hit_at_one_of_its_four_points():
    """002 sec. 7: a stopped vehicle's collision point follows from its position and part."""
    plan = scene([car("s", "east", ["stop"]), car("m", "east")],
                 [{"actor": "m", "actor_part": "front", "victim": "s", "victim_part": "rear"}])
    (c,) = plan.collisions
    assert c.position_m == pytest.approx((-20.0 - CAR_L / 2, -1.75))
    s = by_name(plan)["s"]
    assert np.all(s.x_m == -20.0) and np.all(s.y_m == -1.75)


def test_approaches_have_no_kink_and_turns_stay_turns():
    """The removed part is replaced by the own path shifted sideways by a cosine ramp: before
    its first collision no trajectory bends by more than 8 deg between two segments (arc
    points are 5 deg apart; resampling the ramp along them adds a little), also for a left
    turner hit on its right side in the crossroad."""
    turn = scene([car("turner", "east", ["turn_left"]),
                  {**car("oncoming", "west"), "kind": "truck"}],
                 [{"actor": "oncoming", "actor_part": "front", "victim": "turner",
                   "victim_part": "rightside", "position_m": [0.5, 1.75]}])
    for plan in (plan_of("a4"), plan_of("rear_end_chain"), turn):
        for tr in plan.trajectories:
            first = min(c.time_s for c in plan.collisions if tr.vehicle in (c.actor, c.victim))
            k = int(np.searchsorted(tr.t_s, first - 1e-9))
            yaw = np.arctan2(np.diff(tr.y_m[:k + 1]), np.diff(tr.x_m[:k + 1]))
            bend = np.abs(np.remainder(np.diff(yaw) + np.pi, 2 * np.pi) - np.pi)
            assert bend.max(initial=0.0) < math.radians(8.0), tr.vehicle
    (c,) = turn.collisions
    assert math.radians(30) < c.victim_pose[2] < math.radians(80)  # mid-turn, not straight


def test_the_crossroad_map_holds_a4s_tree_where_the_plan_puts_it():
    from vehicle_sim.core.traffic.mapfile import load_map
    from vehicle_sim.core.traffic.network import Network

    path = Path(__file__).resolve().parents[2] / "config" / "maps" / "crossroad.yaml"
    spec = load_map(path)
    Network(spec, str(path))  # the junction's connector paths compile
    (tree,) = spec.static_objects
    (obj,) = plan_of("a4").scene.objects
    assert (tree.id, tree.x_m, tree.y_m, tree.radius_m) == (obj.id, obj.x_m, obj.y_m,
                                                           obj.radius_m)
