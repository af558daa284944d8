"""Map format (paper 004 sec. 2): the default map loads; malformed maps are refused by key."""
import copy
import math

import numpy as np
import pytest

from vehicle_sim.core.config import ConfigError
from vehicle_sim.core.traffic import geometry as geo
from vehicle_sim.core.traffic.gridgen import GridSpec, generate
from vehicle_sim.core.traffic.kernels.lane_path import fill_turns
from vehicle_sim.core.traffic.kernels.layout import LF_TURN, LI_NP, LI_P0, N_LI, PT_HEADING, PT_TURN
from vehicle_sim.core.traffic.mapfile import load_map, map_from_dict
from vehicle_sim.core.traffic.network import Network

MAP = "config/maps/urban_grid.yaml"


def test_default_map_is_a_4x4_block_grid_with_all_signal_kinds():
    spec = load_map(MAP)
    assert len(spec.nodes) == 25  # 4 x 4 blocks -> 5 x 5 junctions
    kinds = {s.kind for s in spec.signals}
    assert kinds == {"traffic_light", "stop", "give_way", "crossing"}
    assert any(s.kind == "crossing" and s.signalised for s in spec.signals)
    assert {o.kind for o in spec.static_objects} == {"tree", "pole", "barrier", "building"}
    two_way = [st for st in spec.streets if {ln.direction for ln in st.lanes} == {"forward",
                                                                                  "backward"}]
    assert len(two_way) == len(spec.streets)
    net = Network(spec, MAP)
    assert len(net.light_names) > 0 and max(net.node_groups) == 2


def test_committed_default_map_equals_the_generator_output(tmp_path):
    """The YAML in the repo is what gridgen writes (one source of truth)."""
    assert map_from_dict(generate(GridSpec())) == load_map(MAP)


def test_fillet_right_turn_has_the_analytic_radius():
    """Perpendicular lanes 6.25 m from the corner: one quarter arc of radius 6.25 m."""
    pieces = geo.fillet((1.75, -8.0, math.pi / 2), (8.0, -1.75, 0.0))
    assert len(pieces) == 1
    length, k = pieces[0]
    assert k == pytest.approx(-1 / 6.25, abs=1e-9)
    assert length == pytest.approx(6.25 * math.pi / 2, abs=1e-9)
    path = geo.sample_pieces(1.75, -8.0, math.pi / 2, pieces)
    assert path[-1, :2] == pytest.approx([8.0, -1.75], abs=1e-6)


def test_connector_turn_signs_follow_rep103():
    net = Network(load_map(MAP), MAP)
    turns = net.net.lane_f[net.n_street_lanes:, LF_TURN]
    assert np.any(turns > 1.5) and np.any(turns < -1.5)  # left (+) and right (-) turns exist


def _base() -> dict:
    return generate(GridSpec(blocks_x=1, blocks_y=1, decorate=False))


@pytest.mark.parametrize("mutate, key", [
    (lambda d: d["streets"][0]["lanes"][0].__setitem__("width_m", -3.0),
     "streets[0].lanes[0].width_m"),
    (lambda d: d["streets"][0]["lanes"][0].__setitem__("direction", "sideways"),
     "streets[0].lanes[0].direction"),
    (lambda d: d["nodes"][0]["connections"][0].__setitem__("probability", 0.9),
     "nodes[0].connections"),
    (lambda d: d["nodes"][0]["connections"][0].__setitem__("to_lane", "nowhere"),
     "nodes[0].connections[0].to_lane"),
    (lambda d: d["signals"].append({"id": "x", "kind": "stop", "lanes": ["nowhere"]}),
     "signals"),
    (lambda d: d["signals"].append({"id": "x", "kind": "speed_bump", "lanes": []}),
     "kind"),
    (lambda d: d["streets"][0].pop("reference"), "streets[0].reference"),
    (lambda d: d.__setitem__("format_version", 2), "format_version"),
])
def test_malformed_maps_are_refused_naming_the_key(mutate, key):
    data = copy.deepcopy(_base())
    mutate(data)
    with pytest.raises(ConfigError) as err:
        map_from_dict(data, source="bad.yaml")
    assert "bad.yaml" in str(err.value) and key in str(err.value)


@pytest.mark.parametrize("mutate, key, words", [
    (lambda d: d["streets"][0]["reference"].__setitem__("x_m", 1e12),
     "streets[0].reference.x_m", "<= 10000.0 m"),
    (lambda d: d["streets"][0]["reference"]["pieces"][0].__setitem__("length_m", 1e12),
     "streets[0].reference.pieces[0].length_m", "<= 10000.0 m"),
    (lambda d: d.__setitem__("streets", [
        {**d["streets"][0], "id": f"s{i}",
         "lanes": [{**ln, "id": f"s{i}_{ln['id']}"} for ln in d["streets"][0]["lanes"]],
         "reference": {"x_m": 0.0, "y_m": 0.0, "heading_rad": 0.0,
                       "pieces": [{"length_m": 5000.0, "curvature_1pm": 1e-3}] * 40}}
        for i in range(6)]), "", "km of lanes in total"),
    (lambda d: d["streets"][0]["reference"].__setitem__(  # starts inside, runs 1,000 km away
        "pieces", [{"length_m": 10_000.0}] * 100), "streets[0].reference", "ends at"),
    (lambda d: d.setdefault("static_objects", []).append(
        {"id": "b", "kind": "building", "footprint": [[0, 0], [1e9, 0], [0, 5]]}),
     "static_objects[0].footprint[1][0]", "<= 10000.0 m"),
])
def test_map_geometry_is_bounded_before_the_network_is_built(mutate, key, words):
    """A map whose geometry would make the network (or the neighbour grid) allocate without
    bound is refused at load (issue 13: 1e12 m took the machine's memory)."""
    data = copy.deepcopy(_base())
    mutate(data)
    with pytest.raises(ConfigError) as err:
        map_from_dict(data, source="huge.yaml")
    assert err.value.key == key and words in str(err.value), str(err.value)


def _tree(i: int) -> dict:
    return {"id": f"t{i}", "kind": "tree", "x_m": 5.0, "y_m": float(i % 100), "radius_m": 0.4}


@pytest.mark.parametrize("mutate, words", [
    (lambda d: d["nodes"][0]["connections"].extend(  # probabilities still sum to 1
        [{**d["nodes"][0]["connections"][0], "probability": 0.0}] * 600),
     "at most 500 per junction"),
    (lambda d: d["nodes"][0]["connections"].append(
        {**d["nodes"][0]["connections"][0], "probability": 0.0}), "a second time"),
    (lambda d: d.__setitem__("streets", [  # 120 km of radius-1 m circles: 1.5e6 points
        {**d["streets"][0], "id": f"s{i}", "lanes": [{**d["streets"][0]["lanes"][0],
                                                       "id": f"s{i}_l", "offset_m": 0.0}],
         "reference": {"x_m": 0.0, "y_m": 0.0, "heading_rad": 0.0,
                       "pieces": [{"length_m": 10_000.0, "curvature_1pm": 1.0}]}}
        for i in range(12)]), "points"),
    (lambda d: d["streets"][0].__setitem__("reference", {  # 10 m inside a 10 m radius
        **d["streets"][0]["reference"], "pieces": [{"length_m": 20.0, "curvature_1pm": 0.1}]})
     or d["streets"][0]["lanes"][0].__setitem__("offset_m", 10.0), "of the radius as offset"),
    (lambda d: d["streets"][0].__setitem__("reference", {  # ... and 10 m inside, turning right
        **d["streets"][0]["reference"], "pieces": [{"length_m": 20.0, "curvature_1pm": -0.1}]})
     or d["streets"][0]["lanes"][0].__setitem__("offset_m", -10.0), "to the inside of an arc"),
    (lambda d: d.__setitem__("streets", []), "at least one lane"),
    (lambda d: d["streets"][0]["lanes"][0].__setitem__("id", "a\"<>&'\x01"), "is not 1-64"),
    (lambda d: d["streets"][0]["lanes"][0].__setitem__("id", "x" * 3_000_000),
     "(3000000 characters)"),
    (lambda d: d.setdefault("static_objects", []).extend([_tree(1), _tree(1)]),
     "duplicate static object id 't1'"),
    (lambda d: d.setdefault("static_objects", []).extend(_tree(i) for i in range(10_001)),
     "static_objects: 10001, at most 10000"),
    (lambda d: d.setdefault("static_objects", []).append({"id": "b", "kind": "barrier"}),
     "a barrier needs a footprint"),
    (lambda d: d.setdefault("static_objects", []).append(
        {"id": "b", "kind": "building", "footprint": [[math.cos(a / 300), math.sin(a / 300)]
                                                      for a in range(2000)]}), "at most 1000"),
    (lambda d: d["signals"].append({"id": "x", "kind": "stop", "lanes": [
        d["streets"][0]["lanes"][0]["id"]] * 2}), "duplicate lane id"),
])
def test_a_map_that_would_cost_without_bound_or_mean_nothing_is_refused(mutate, words):
    """What a hostile or careless map adds up to (connections paired n^2, sampled points,
    static objects, footprints) is bounded at load, and what cannot mean a road (no lane, a
    lane offset past its arc's centre, ids a log line or an OSM file cannot carry, repeats) is
    refused there too, in one line, not as a failure in every node."""
    data = copy.deepcopy(_base())
    mutate(data)
    with pytest.raises(ConfigError) as err:
        map_from_dict(data, source="hostile.yaml")
    text = str(err.value)
    assert "hostile.yaml" in text and words in text and len(text) < 400, text[:400]


def test_a_lane_outside_a_tight_arc_is_a_road():
    """A ring street whose reference is its inner kerb (radius 8 m), lanes out to 8.75 m to its
    outside: a 16.75 m radius lane, accepted (only the inside of an arc degenerates)."""
    data = copy.deepcopy(_base())
    street = data["streets"][0]
    street["reference"] = {**street["reference"],
                           "pieces": [{"length_m": 20.0, "curvature_1pm": 1 / 8}]}
    street["lanes"][0]["offset_m"] = -8.75
    map_from_dict(data, source="ring.yaml")


def test_a_fifo_given_as_a_map_is_refused_without_blocking(tmp_path):
    import os
    fifo = tmp_path / "map.yaml"
    os.mkfifo(fifo)
    with pytest.raises(ConfigError, match="not a regular file"):
        load_map(fifo)


def test_impossible_connector_geometry_names_the_connection():
    data = copy.deepcopy(_base())
    c = data["nodes"][0]["connections"][0]
    c["to_lane"] = c["from_lane"]  # back to the start of the lane it ends: a U-turn in place
    with pytest.raises(ConfigError, match=r"nodes\[0\]\.connections\[0\]"):
        Network(map_from_dict(data, "bad.yaml"), "bad.yaml")


def test_a_node_away_from_its_connectors_is_refused_and_a_box_a_little_small_is_not():
    """Agents yield to the ego inside a node's box alone (x_m, y_m, radius_m): a node drawn
    5 km from its lanes was taken, and agents drove through the ego at that junction."""
    data = copy.deepcopy(_base())
    node = data["nodes"][0]
    node["x_m"] += 5000.0
    with pytest.raises(ConfigError) as err:
        Network(map_from_dict(data, "far.yaml"), "far.yaml")
    assert "nodes[0].connections[0]" in str(err.value) and "outside its radius_m" in str(err.value)
    data = copy.deepcopy(_base())
    spec = map_from_dict(data)
    net = Network(spec, "ok.yaml")
    n = spec.nodes[0]
    reach = max(float(np.max(np.hypot(net.paths[i][:, 0] - n.x_m, net.paths[i][:, 1] - n.y_m)))
                for i in net.node_connectors[0])
    data["nodes"][0]["radius_m"] = reach - 3.0  # within the slack of a lane's width
    Network(map_from_dict(data, "small.yaml"), "small.yaml")
    data["nodes"][0]["radius_m"] = reach - 4.0
    with pytest.raises(ConfigError, match=r"nodes\[0\]\.connections\[\d+\].*outside"):
        Network(map_from_dict(data, "smaller.yaml"), "smaller.yaml")


def test_malformed_yaml_file_names_file(tmp_path):
    bad = tmp_path / "m.yaml"
    bad.write_text("streets: [\n")
    with pytest.raises(ConfigError, match="m.yaml.*malformed YAML"):
        load_map(bad)


def test_turn_column_is_each_segments_wrapped_heading_change_and_an_empty_lane_writes_nothing():
    """lane_path.fill_turns: PT_TURN of a point is the heading change to the next point wrapped
    to [-pi, pi], 0 at a lane's last point; a lane without points writes no row (not row -1)."""
    headings = [3.0, -3.0, -2.5, 0.0]  # 3.0 -> -3.0 is a 0.28 rad left turn across +-pi
    pts = np.full((4, 6), 7.0)
    pts[:, PT_HEADING] = headings
    lane_i = np.zeros((2, N_LI), dtype=np.int64)
    lane_i[0, LI_P0], lane_i[0, LI_NP] = 0, 4
    lane_i[1, LI_P0], lane_i[1, LI_NP] = 0, 0  # empty
    fill_turns(pts, lane_i)
    assert pts[:3, PT_TURN] == pytest.approx([2 * math.pi - 6.0, 0.5, 2.5])
    assert pts[3, PT_TURN] == 0.0
    pts[3, PT_TURN] = 7.0
    lane_i[0, LI_NP] = 0
    fill_turns(pts, lane_i)
    assert pts[3, PT_TURN] == 7.0
