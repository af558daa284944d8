"""The map's markers over DDS: the traffic node publishes lanes, static objects and signals once
on the latched map/markers, so a viewer that joins later (RViz, the live view) still gets them."""
from __future__ import annotations

import numpy as np
import pytest
from visualization_msgs.msg import Marker, MarkerArray

from vehicle_sim.core.traffic.mapfile import load_map
from vehicle_sim.nodes import qos
from vehicle_sim.paths import config_path
from vehicle_sim.report.lanes import load_lanes, stop_lines

MAP = "maps/urban_grid.yaml"


def test_lanes_objects_and_stop_signs_are_latched_for_late_joiners(ros_node, start_node):
    proc = start_node("traffic_node", params={"use_sim_time": True, "map_file": MAP,
                                              "publish_markers": True})
    ros_node.spin_until(lambda: ros_node.count_publishers("map/markers") > 0, timeout_s=60.0,
                        what="the traffic node's map/markers publisher")
    got: list[MarkerArray] = []  # joins after the node published: transient local
    ros_node.create_subscription(MarkerArray, "map/markers", got.append, qos.LATCHED)
    ros_node.spin_until(lambda: got, what="the latched map markers")
    assert proc.proc.poll() is None
    by_ns: dict[str, list[Marker]] = {}
    for m in got[0].markers:
        by_ns.setdefault(m.ns, []).append(m)
    spec = load_map(config_path(MAP))
    street_lanes = sum(len(s.lanes) for s in spec.streets)
    lanes = by_ns["lanes"]
    assert len(lanes) > street_lanes  # street lanes and the junctions' connectors
    assert all(m.type == Marker.LINE_STRIP and len(m.points) >= 2 and m.header.frame_id == "map"
               for m in lanes)
    assert len(by_ns.get("static_objects", [])) == len(spec.static_objects)
    drawn = np.array([(p.x, p.y) for p in by_ns["signals_stop"][0].points])
    lines = stop_lines(*load_lanes(MAP)[:2])
    assert len(drawn) == len(lines) > 0
    for x, y, _ in lines.values():  # each stop line drawn within a sample spacing of its place
        assert np.min(np.hypot(drawn[:, 0] - x, drawn[:, 1] - y)) == pytest.approx(0.0, abs=1.5)
