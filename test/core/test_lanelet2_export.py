"""The Lanelet2 export read back by lanelet2 itself: geometry in the map frame about the given
origin, routing across junctions through the turn connectors, speed limits, traffic lights and
signs as regulatory elements with their stop lines."""
from __future__ import annotations

import math

import pytest

from vehicle_sim.core.traffic.mapfile import load_map
from vehicle_sim.core.traffic.network import Network
from vehicle_sim.export.cli import main as export_main
from vehicle_sim.export.lanelet2_osm import Lanelet2Params, light_group_id, write_lanelet2
from vehicle_sim.paths import config_path

lanelet2 = pytest.importorskip("lanelet2", reason="the test extra installs lanelet2")
from lanelet2.io import Origin  # noqa: E402
from lanelet2.projection import LocalCartesianProjector  # noqa: E402

ORIGIN = Lanelet2Params(origin_latitude_deg=48.137, origin_longitude_deg=11.575,
                        origin_altitude_m=520.0)


def network(name: str) -> Network:
    path = config_path(f"maps/{name}.yaml")
    return Network(load_map(path), str(path))


def load_back(net: Network, tmp_path, p: Lanelet2Params = ORIGIN):
    path = tmp_path / "map.osm"
    write_lanelet2(net, path, p)
    projector = LocalCartesianProjector(Origin(p.origin_latitude_deg, p.origin_longitude_deg,
                                               p.origin_altitude_m))
    lmap, errors = lanelet2.io.loadRobust(str(path), projector)
    assert not errors, errors[:5]
    lanelets = {ll.attributes["vsim:lane"]: ll for ll in lmap.laneletLayer}
    return lmap, lanelets


def routing(lmap):
    rules = lanelet2.traffic_rules.create(lanelet2.traffic_rules.Locations.Germany,
                                          lanelet2.traffic_rules.Participants.Vehicle)
    return rules, lanelet2.routing.RoutingGraph(lmap, rules)


def names(path) -> list[str]:
    return [ll.attributes["vsim:lane"] for ll in path]


@pytest.fixture(scope="module")
def crossroad():
    return network("crossroad")


@pytest.fixture(scope="module")
def grid():
    return network("urban_grid")


def test_every_lane_is_a_lanelet_in_the_map_frame(crossroad, tmp_path):
    _, lanelets = load_back(crossroad, tmp_path)
    assert sorted(lanelets) == sorted(crossroad.lane_names)
    for lane, name in enumerate(crossroad.lane_names):
        centre = lanelets[name].centerline
        path = crossroad.paths[lane]
        for point, (x, y) in ((centre[0], path[0, :2]), (centre[-1], path[-1, :2])):
            assert math.hypot(point.x - x, point.y - y) < 0.01, name  # projection round trip
        width = math.hypot(lanelets[name].leftBound[0].x - lanelets[name].rightBound[0].x,
                           lanelets[name].leftBound[0].y - lanelets[name].rightBound[0].y)
        assert width == pytest.approx(3.5, abs=0.01)


def test_routes_turn_through_the_junction_connectors(crossroad, tmp_path):
    lmap, lanelets = load_back(crossroad, tmp_path)
    _, graph = routing(lmap)
    left = graph.shortestPath(lanelets["west_f0"], lanelets["north_f0"])
    assert names(left) == ["west_f0", "centre:west_f0>north_f0", "north_f0"]
    assert lanelets["centre:west_f0>north_f0"].attributes["turn_direction"] == "left"
    right = graph.shortestPath(lanelets["west_f0"], lanelets["south_b0"])
    assert names(right) == ["west_f0", "centre:west_f0>south_b0", "south_b0"]
    assert lanelets["centre:west_f0>south_b0"].attributes["turn_direction"] == "right"
    assert lanelets["centre:west_f0>east_f0"].attributes["turn_direction"] == "straight"
    # no U-turn connection in the map: no route back west on the same street
    assert graph.shortestPath(lanelets["west_f0"], lanelets["west_b0"]) is None
    assert len(graph.following(lanelets["west_f0"])) == 3


def test_routes_across_the_grid_and_reads_back_limits_and_lights(grid, tmp_path):
    lmap, lanelets = load_back(grid, tmp_path)
    rules, graph = routing(lmap)
    # opposite corners of the grid: only possible by turning at junctions
    path = graph.shortestPath(lanelets["h0_0_f0"], lanelets["h4_3_b0"])
    assert path is not None
    route = names(path)
    assert route[0] == "h0_0_f0" and route[-1] == "h4_3_b0"
    turns = [lanelets[n].attributes["turn_direction"] for n in route if ":" in n]
    assert {"left", "right"} & set(turns)
    for a, b in zip(route[:-1], route[1:], strict=True):  # every step is a map connection
        assert b in {grid.lane_names[s] for s in grid.successors(grid.lane_names.index(a))[0]}
    for lane, name in enumerate(grid.lane_names):
        limit_kmh = rules.speedLimit(lanelets[name]).speedLimit  # lanelet2's Python: km/h
        assert limit_kmh / 3.6 == pytest.approx(grid.speed_limit(lane), abs=0.01), name
    assert len(grid.light_names) > 0
    for k, light in enumerate(grid.light_names):
        lane = grid.light_lane[k]
        regs = lanelets[grid.lane_names[lane]].trafficLights()
        assert [r.id for r in regs] == [light_group_id(k)]
        stop = regs[0].stopLine
        mid = ((stop[0].x + stop[1].x) / 2, (stop[0].y + stop[1].y) / 2)
        s = next(sg.s_m for sg in grid.signals(lane) if sg.light == light)
        x, y, _, _ = grid.point(lane, s)
        assert math.hypot(mid[0] - x, mid[1] - y) < 0.01, light
        assert len(regs[0].trafficLights) == 1


def test_stop_and_give_way_signs_are_sign_regulatory_elements(grid, tmp_path):
    lmap, _ = load_back(grid, tmp_path)
    expected = sum(1 for lane in range(grid.n_lanes) for sg in grid.signals(lane)
                   if sg.kind in ("stop", "give_way"))
    signs = [r for r in lmap.regulatoryElementLayer
             if r.attributes["subtype"] == "traffic_sign"]
    assert expected > 0 and len(signs) == expected
    subtypes = {r.parameters["refers"][0].attributes["subtype"] for r in signs}
    assert subtypes == {"de206", "de205"}


def test_the_cli_writes_lanelet2_and_a_nav2_grid(tmp_path, capsys):
    out, grid = tmp_path / "x.osm", tmp_path / "x_grid"
    assert export_main(["maps/crossroad.yaml", "--out", str(out), "--origin", "48.1,11.5",
                        "--grid", str(grid), "--resolution", "0.5"]) == 0
    assert out.is_file() and (tmp_path / "x_grid.pgm").is_file()
    meta = (tmp_path / "x_grid.yaml").read_text()
    assert "resolution: 0.5" in meta and "image: x_grid.pgm" in meta


@pytest.mark.parametrize("args,words", [
    (["maps/none.yaml"], "none.yaml"),
    (["maps/crossroad.yaml", "--origin", "95,0"], "origin_latitude_deg"),
    (["maps/crossroad.yaml", "--grid", "g", "--resolution", "0.001"], "resolution_m"),
])
def test_the_cli_refuses_bad_input_in_one_line(tmp_path, capsys, args, words):
    assert export_main([*args, "--out", str(tmp_path / "x.osm")]) == 2
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1, err


def test_same_direction_neighbours_share_a_dashed_bound_for_lane_changes(grid, tmp_path):
    lmap, lanelets = load_back(grid, tmp_path)
    _, graph = routing(lmap)
    inner, outer = lanelets["h2_0_f0"], lanelets["h2_0_f1"]  # the avenue: two lanes each way
    assert outer.leftBound.id == inner.rightBound.id
    assert inner.rightBound.attributes["subtype"] == "dashed"
    assert graph.left(outer) == inner and graph.right(inner) == outer
    single = lanelets["h0_0_f0"]  # one lane each way: no lane change, solid bounds
    assert graph.left(single) is None and graph.right(single) is None
    assert single.leftBound.attributes["subtype"] == "solid"
