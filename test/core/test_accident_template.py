"""Accident templates (paper 002's model M): the shipped files load; every bad case is one
ConfigError line naming the file, the key and the problem."""
import copy
from pathlib import Path

import pytest

from vehicle_sim.core.accident.planners.plan import check_chains, plan_accident
from vehicle_sim.core.accident.planners.preplanner import preplan
from vehicle_sim.core.accident.template import load_template, template_from_dict
from vehicle_sim.core.config import ConfigError, load_yaml

ROOT = Path(__file__).resolve().parents[2]
A4 = ROOT / "config" / "accidents" / "a4.yaml"
SIZES = {"car": (4.298, 1.674), "truck": (7.49, 2.4675)}  # medium_car.yaml, truck.yaml


def a4() -> dict:
    return copy.deepcopy(load_yaml(A4))


def refused(data: dict, match: str, key: str = "") -> str:
    """The one-line error of validating and planning ``data``."""
    with pytest.raises(ConfigError, match=match) as info:
        plan_accident(template_from_dict(data, source="bad.yaml"), SIZES)
    text = str(info.value)
    assert text.startswith("bad.yaml: ") and "\n" not in text
    assert key in text
    return text


def test_shipped_templates_load_as_002_writes_them():
    tpl = load_template(A4)
    assert tpl.road == "crossroad" and tpl.y_axis == "south"
    assert [(s.id, s.kind, s.x_m, s.y_m) for s in tpl.static_objects] == [
        ("tree1", "tree", 5.0, -5.0)]
    assert [(v.id, v.kind, v.direction, v.events) for v in tpl.vehicles] == [
        ("vehicleB", "car", "east", ("driving_forward",)),
        ("vehicleA", "car", "north", ("driving_forward",))]
    c1, c2 = tpl.collisions
    assert (c1.actor, c1.actor_part, c1.victim, c1.victim_part, c1.position_m) == (
        "vehicleB", "front", "vehicleA", "leftside", (1.0, 1.0))
    assert (c2.actor, c2.actor_part, c2.victim, c2.victim_part) == (
        "vehicleA", "front", "tree1", "unknown")
    chain = load_template(ROOT / "config" / "accidents" / "rear_end_chain.yaml")
    assert len(chain.vehicles) == 3 and len(chain.collisions) == 2


@pytest.mark.parametrize("edit, match, key", [
    (lambda d: d["vehicles"][0].update(kind="bus"), "'bus' is not one of car, truck",
     "vehicles[0].kind"),
    (lambda d: d["vehicles"][1].update(direction="up"), "'up' is not one of",
     "vehicles[1].direction"),
    (lambda d: d["vehicles"][0].update(events=["fly"]), "'fly' is not one of",
     "vehicles[0].events[0]"),
    (lambda d: d["vehicles"][0].update(events=[]), "empty event chain", "vehicles[0].events"),
    (lambda d: d["vehicles"][0].update(events=["stop", "driving_forward"]),
     "'stop' must be the last event", "vehicles[0].events"),
    (lambda d: d["static_objects"][0].update(kind="house"), "'house' is not one of",
     "static_objects[0].kind"),
    (lambda d: d["static_objects"][0].update(x_m=float("nan")), "must be finite",
     "static_objects[0].x_m"),
    (lambda d: d["static_objects"][0].update(y_m=1e300), "must be <=", "static_objects[0].y_m"),
    (lambda d: d["collisions"][0].update(actor_part="roof"), "'roof' is not one of",
     "collisions[0].actor_part"),
    (lambda d: d["collisions"][0].update(actor="vehicleC"), "'vehicleC' is not a vehicle",
     "collisions[0].actor"),
    (lambda d: d["collisions"][1].update(actor="tree1"), "'tree1' is a static object",
     "collisions[1].actor"),
    (lambda d: d["collisions"][1].update(victim="tree2"), "unknown object 'tree2'",
     "collisions[1].victim"),
    (lambda d: d["collisions"][0].update(victim="vehicleB"), "cannot collide with itself",
     "collisions[0].victim"),
    (lambda d: d["collisions"][1].update(victim_part="front"), "static object has no part",
     "collisions[1].victim_part"),
    (lambda d: d["collisions"][0].update(position_m=[1.0]), "expected \\[x, y\\]",
     "collisions[0].position_m"),
    (lambda d: d["vehicles"][1].update(id="vehicleB"), "duplicate name 'vehicleB'",
     "vehicles[1].id"),
    (lambda d: d["vehicles"][1].update(id="B\nFAKE LOG LINE"), "is not 1-64 of",
     "vehicles[1].id"),
    (lambda d: d["static_objects"].extend({**d["static_objects"][0], "id": f"t{i}"}
                                          for i in range(50)), "51 entries, at most 50",
     "static_objects"),
    (lambda d: d.update(t_split=1.0), "must be < 1.0", "t_split"),
    (lambda d: d.update(speed_mps=300.0), "must be <= 30.0", "speed_mps"),
    (lambda d: d.update(speed_mps=1e-9), "must be >= 1.0", "speed_mps"),
    (lambda d: d.update(collisions=[]), "at least one collision", "collisions"),
    (lambda d: d.update(wheather="rain"), "unknown parameter", "wheather"),
    (lambda d: d["vehicles"].__setitem__(0, "car"), "expected a mapping", "vehicles[0]"),
    (lambda d: d["vehicles"][0].update(events="driving_forward"), "expected a list",
     "vehicles[0].events"),
    (lambda d: d["collisions"][0].update(position_m=["a", "b"]), "expected a number",
     "collisions[0].position_m[0]"),
    (lambda d: d["vehicles"][0].update(events=["stop"]), "'vehicleB' stands still",
     "collisions[0].actor"),
])
def test_bad_templates_name_the_problem(edit, match, key):
    data = a4()
    edit(data)
    refused(data, match, key)


def test_an_actor_that_can_never_reach_its_collision_is_refused():
    data = a4()
    data["collisions"][0]["position_m"] = [60.0, 60.0]
    text = refused(data, "can never reach", "collisions[0]")
    assert "'vehicleB'" in text


def test_collisions_out_of_time_order_are_refused():
    """A4 with its collisions swapped: A would hit the tree first and then have to turn back
    to be hit by B at (1, 1)."""
    data = a4()
    data["collisions"].reverse()
    refused(data, "out of time order", "collisions[1]")


def test_overlapping_start_positions_are_refused():
    data = a4()
    data["vehicles"].append({"id": "vehicleC", "kind": "truck", "direction": "east",
                             "events": ["driving_forward"], "start_distance_m": 23.0})
    refused(data, "start positions of .* overlap", "start_distance_m")


def test_more_than_three_vehicles_on_an_approach_are_refused():
    data = a4()
    for k in range(3):
        data["vehicles"].append({"id": f"extra{k}", "kind": "car", "direction": "east",
                                 "events": ["driving_forward"]})
    refused(data, "at most 3 per approach", "vehicles[4].direction")


def test_contradictions_of_the_pre_planner_are_refused():
    data = a4()
    data["road"] = "straight_road"
    refused(data, "on a straight road", "vehicles[1].direction")
    data = a4()
    data["road"] = "straight_road"
    data["vehicles"] = [data["vehicles"][0]]
    data["vehicles"][0]["events"] = ["turn_left"]
    data["collisions"] = [{"actor": "vehicleB", "actor_part": "front", "victim": "tree1",
                           "victim_part": "unknown"}]
    refused(data, "turn_left on a straight road", "vehicles[0].events[0]")


def test_a_moving_victim_without_a_position_is_refused():
    data = a4()
    data["collisions"][0]["position_m"] = []
    refused(data, "victim 'vehicleA' is moving", "collisions[0].position_m")


def test_malformed_files_name_the_file(tmp_path):
    bad = tmp_path / "broken.yaml"
    bad.write_text("name: [unclosed\n")
    with pytest.raises(ConfigError, match="broken.yaml: malformed YAML"):
        load_template(bad)
    bad.write_text("format_version: 1\nname: x\nroad: crossroad\nvehicles: 3\ncollisions: []\n")
    with pytest.raises(ConfigError, match="broken.yaml: vehicles: expected a list"):
        load_template(bad)


def test_a_collision_the_crash_physics_could_not_answer_is_refused():
    """In a scene a vehicle with later collisions of its own keeps to its plan (a prescribed
    body, core.accident.scene), so a static object must be its last collision, and one of two
    vehicles in a collision must end its chain there."""
    data = a4()  # A hits the tree, then B hits A: A's tree collision is not its last
    data["collisions"] = [
        {"actor": "vehicleA", "actor_part": "front", "victim": "tree1", "victim_part": "unknown"},
        {"actor": "vehicleB", "actor_part": "front", "victim": "vehicleA",
         "victim_part": "leftside"}]
    with pytest.raises(ConfigError, match="collisions\\[0\\]"):
        check_chains(preplan(template_from_dict(data, source="bad.yaml"), SIZES))
    data = a4()  # B hits A, then A hits B again: neither ends its chain at collision 1
    data["collisions"].insert(1, {"actor": "vehicleA", "actor_part": "rear",
                                  "victim": "vehicleB", "victim_part": "front"})
    scene = preplan(template_from_dict(data, source="bad.yaml"), SIZES)
    with pytest.raises(ConfigError, match="both 'vehicleB' and 'vehicleA' have later"):
        check_chains(scene)
    check_chains(preplan(load_template(A4), SIZES))  # the shipped one passes
