"""A scene's planned collision with a static object happens only through the map's body of
that object (the crash physics has no other): the traffic refuses a template whose hit object
the map has not, or has elsewhere once accident_origin / accident_heading moved the scene."""
from __future__ import annotations

from dataclasses import replace

import pytest

from vehicle_sim.core.accident.scene import STATIC_MATCH_M, _distance_m
from vehicle_sim.core.accident.traffic_world import make_crashes, make_sim
from vehicle_sim.core.config import ConfigError
from vehicle_sim.core.traffic.mapfile import StaticObject
from vehicle_sim.core.traffic.node_params import TrafficNodeParams

A4 = dict(map_file="maps/crossroad.yaml", params_file="traffic/no_agents.yaml",
          accident_template="accidents/a4.yaml")


def crashes(**params):
    p = TrafficNodeParams(**{**A4, **params})
    sim, _ = make_sim(p)
    scene, world = make_crashes(p, sim)
    if world is not None:
        world.close()
    return scene


@pytest.mark.parametrize("moved", [{}, {"accident_origin_x_m": 0.3}])
def test_a4_on_the_crossroad_hits_the_maps_tree(moved):
    """tree1 of a4 (5, -5 with y south) is the crossroad's tree1 at (5, 5); 0.3 m off is one."""
    assert crashes(**moved) is not None


@pytest.mark.parametrize("moved, words", [
    ({"accident_origin_x_m": 30.0}, "tree1 is at (35.00, 5.00) m in the map frame"),
    ({"accident_heading_rad": 0.5}, "the map's tree1 is 3.50 m from there"),
])
def test_a_scene_moved_off_the_maps_tree_is_refused_naming_it(moved, words):
    with pytest.raises(ConfigError) as err:
        crashes(**moved)
    assert err.value.key == "static_objects[0]" and words in str(err.value), err.value
    assert f"at most {STATIC_MATCH_M:g} m" in str(err.value)


def test_a_map_without_the_tree_is_refused_and_without_crashes_nothing_is_checked():
    with pytest.raises(ConfigError, match="the map has no static object tree1"):
        crashes(map_file="maps/urban_grid.yaml")
    assert crashes(map_file="maps/urban_grid.yaml", crashes=False) is not None


def test_distance_to_a_footprint_is_zero_inside_and_to_the_nearest_edge_outside():
    box = StaticObject(id="b", kind="building", footprint=((0, 0), (4, 0), (4, 2), (0, 2)))
    assert _distance_m(box, 1.0, 1.0) == 0.0
    assert _distance_m(box, 6.0, 1.0) == pytest.approx(2.0)
    assert _distance_m(box, 7.0, 6.0) == pytest.approx(5.0)  # the corner (4, 2)
    tree = replace(box, kind="tree", footprint=(), x_m=1.0, y_m=1.0, radius_m=0.4)
    assert _distance_m(tree, 4.0, 5.0) == pytest.approx(5.0)
