"""The map as a visualization_msgs/MarkerArray, published once on the latched ``map/markers``.

Lane centre lines (LINE_STRIP per lane: street lanes white, junction connectors grey), static
objects (trees and poles as cylinders of their radius, building and barrier footprints as closed
outlines) and each signal's stop line position (traffic lights yellow, stop signs red spheres on
the ground). Display only: for RViz (config/rviz/urban.rviz) and recordings.
"""
from __future__ import annotations

import numpy as np
from geometry_msgs.msg import Point
from std_msgs.msg import ColorRGBA
from visualization_msgs.msg import Marker, MarkerArray

from vehicle_sim.core.traffic.network import Network

TOPIC = "map/markers"
LINE_WIDTH_M = 0.15  # drawn lane centre line width (display only)
OBJECT_HEIGHT_M = 3.0  # drawn height of trees, poles and footprints (display only)
_STREET = ColorRGBA(r=0.9, g=0.9, b=0.9, a=1.0)
_CONNECTOR = ColorRGBA(r=0.5, g=0.5, b=0.5, a=0.8)
_OBJECT = ColorRGBA(r=0.35, g=0.55, b=0.3, a=0.9)
_SIGN = {"traffic_light": ColorRGBA(r=1.0, g=0.8, b=0.0, a=1.0),
         "stop": ColorRGBA(r=0.9, g=0.0, b=0.0, a=1.0)}


def _marker(ns: str, i: int, kind: int, frame: str) -> Marker:
    m = Marker(ns=ns, id=i, type=kind, action=Marker.ADD)
    m.header.frame_id = frame
    m.pose.orientation.w = 1.0
    return m


def map_markers_msg(network: Network, frame: str) -> MarkerArray:
    """Every lane, static object and signal of ``network`` (no stamp: the map does not move)."""
    out = []
    for i, path in enumerate(network.paths):
        m = _marker("lanes", i, Marker.LINE_STRIP, frame)
        m.scale.x = LINE_WIDTH_M
        m.color = _STREET if i < network.n_street_lanes else _CONNECTOR
        m.points = [Point(x=float(x), y=float(y), z=0.0) for x, y in path[:, :2].tolist()]
        out.append(m)
    for i, obj in enumerate(network.spec.static_objects):
        if obj.footprint:
            m = _marker("static_objects", i, Marker.LINE_STRIP, frame)
            m.scale.x = LINE_WIDTH_M
            corners = [*obj.footprint, obj.footprint[0]]
            m.points = [Point(x=float(x), y=float(y), z=0.0) for x, y in corners]
        else:
            m = _marker("static_objects", i, Marker.CYLINDER, frame)
            m.pose.position = Point(x=obj.x_m, y=obj.y_m, z=0.5 * OBJECT_HEIGHT_M)
            m.scale.x = m.scale.y = 2.0 * obj.radius_m
            m.scale.z = OBJECT_HEIGHT_M
        m.color = _OBJECT
        out.append(m)
    for kind, colour in _SIGN.items():
        m = _marker(f"signals_{kind}", 0, Marker.SPHERE_LIST, frame)
        m.scale.x = m.scale.y = m.scale.z = 0.8
        m.color = colour
        lanes = {name: k for k, name in enumerate(network.lane_names)}
        for sig in network.spec.signals:
            if sig.kind != kind:
                continue
            for lane in sig.lanes:
                path = network.paths[lanes[lane]]
                s = np.hypot(*np.diff(path[:, :2], axis=0).T).cumsum()
                j = int(np.searchsorted(s, s[-1] - sig.distance_from_end_m)) if len(s) else 0
                x, y = path[min(j + 1, len(path) - 1), :2]
                m.points.append(Point(x=float(x), y=float(y), z=0.0))
        out.append(m)
    return MarkerArray(markers=out)
