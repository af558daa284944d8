"""The map as a Lanelet2 map (OSM XML), so a stack plans on the same city (issue 12).

What is written (Lanelet2 tagging as its docs, LaneletPrimitives.md and RegulatoryElementTagging.md,
and Autoware's map format describe it):
- every lane of the compiled network is one lanelet (``type=lanelet, subtype=road,
  location=urban, one_way=yes``): street lanes and the generated junction connectors alike, the
  latter with Autoware's ``turn_direction`` (left / right / straight; |turn| < 20 deg is straight,
  a choice). ``vsim:lane`` carries the simulator's lane name, ``speed_limit`` the lane's limit in
  km/h (Lanelet2's default unit). Left / right bounds are the centre line shifted by half the
  lane width; a connector's bounds start at the very points where its lane ends and end at the
  points where the next lane starts, so lanelet2.routing finds the turn connections (successors
  share their bound end points, Lanelet2's ``follows`` rule);
- a stop line (``type=stop_line``) across the lane at each traffic light, stop and give-way sign;
- each vehicle light ("signal:lane" of the map file) is one ``traffic_light`` regulatory element
  whose ``refers`` is a light line string at the lane end (``type=traffic_light,
  subtype=red_yellow_green``) and whose ``ref_line`` is its stop line. Its id is
  :func:`light_group_id` (light k of ``Network.light_names`` -> k + 1), the
  ``traffic_light_group_id`` the ground-truth node sends in Autoware's TrafficLightGroupArray;
- stop and give-way signs are ``traffic_sign`` regulatory elements (signs ``de206`` / ``de205``,
  Lanelet2's country-coded sign names) with their stop line as ``ref_line``.
- neighbouring lanes of one direction share the bound between them (``line_thin dashed``, so
  lane changes are allowed); other bounds are ``line_thin solid``, connectors' ``virtual``.
Not written: zebra crossings (no crosswalk lanelets yet), static objects; opposite lanes keep
bounds of their own (a shared way would have to run both ways).

Frame: the map frame is the local ENU tangent plane at ``origin`` (WGS-84); each node has
``lat``/``lon`` (pymap3d enu2geodetic, the same transformation as Lanelet2's
LocalCartesianProjector and the GPS node), ``ele`` the height above the WGS-84 ellipsoid (the
origin's altitude + the local height; with origin altitude 0 it is the local height, to d^2/2R:
1 mm at 110 m) and Autoware's ``local_x``/``local_y`` tags, so both a projector about the same
origin and Autoware's local projector read back the map coordinates. Local heights: 0 on the
road. No ROS import here.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import quoteattr

import numpy as np
import pymap3d

from vehicle_sim.core.config import spec
from vehicle_sim.core.traffic.kernels.layout import LF_TURN, LF_WIDTH, LI_FROM, LI_LEFT, LI_RIGHT
from vehicle_sim.core.traffic.network import Network

STRAIGHT_BELOW_RAD = math.radians(20.0)  # turn_direction: straight below this turn (a choice)
SIGN_NAMES = {"stop": "de206", "give_way": "de205"}  # Lanelet2 sign subtypes (German codes)
MPS_TO_KMH = 3.6


@dataclass(frozen=True)
class Lanelet2Params:
    """Where the map frame is on the globe and the heights of the furniture written."""

    origin_latitude_deg: float = spec(0.0, unit="deg", ge=-89.0, le=89.0)
    """WGS-84 latitude of the map frame origin"""
    origin_longitude_deg: float = spec(0.0, unit="deg", ge=-180.0, le=180.0)
    """WGS-84 longitude of the map frame origin"""
    origin_altitude_m: float = spec(0.0, unit="m", ge=-1000.0, le=10000.0)
    """origin height above the WGS-84 ellipsoid"""
    light_height_m: float = spec(5.0, unit="m", ge=0.0, le=20.0)
    """height of the light line strings (a choice: mast-arm signals hang about 5 m above the
    road)"""
    sign_height_m: float = spec(2.0, unit="m", ge=0.0, le=10.0)
    """height of the sign lines (a choice: post-mounted signs, about 2 m)"""


def light_group_id(k: int) -> int:
    """Lanelet2 regulatory element id of vehicle light k (``Network.light_names`` order): the
    ``traffic_light_group_id`` of Autoware's traffic-light messages."""
    return k + 1


class _Osm:
    """Nodes, ways and relations with one id counter (ids unique over all three)."""

    def __init__(self, first_id: int):
        self.next_id = first_id
        self.nodes: list[tuple[int, float, float, float]] = []
        self.ways: list[tuple[int, list[int], dict[str, str]]] = []
        self.relations: list[tuple[int, list[tuple[str, int, str]], dict[str, str]]] = []

    def _id(self) -> int:
        self.next_id += 1
        return self.next_id - 1

    def node(self, x: float, y: float, z: float = 0.0) -> int:
        self.nodes.append((self._id(), float(x), float(y), float(z)))
        return self.nodes[-1][0]

    def way(self, refs: list[int], tags: dict[str, str]) -> int:
        self.ways.append((self._id(), refs, tags))
        return self.ways[-1][0]

    def relation(self, members: list[tuple[str, int, str]], tags: dict[str, str],
                 rid: int | None = None) -> int:
        rid = self._id() if rid is None else rid
        self.relations.append((rid, members, tags))
        return rid

    def across(self, x: float, y: float, h: float, half_m: float, z: float = 0.0) -> list[int]:
        """Two nodes across heading h at (x, y): right then left (a line across a lane)."""
        nx, ny = -math.sin(h), math.cos(h)
        return [self.node(x - half_m * nx, y - half_m * ny, z),
                self.node(x + half_m * nx, y + half_m * ny, z)]


SIDES = {"left": (LI_LEFT, "right"), "right": (LI_RIGHT, "left")}  # neighbour, its side


def _bounds(network: Network, osm: _Osm, lane: int, ends: dict, lines: dict
            ) -> dict[str, tuple[int, list[int]]]:
    """Way id and node ids per side of a lane's bounds. Lane ends are shared through ``ends``
    (connectors start and end on their lanes' end points); a street lane's bound that lies on
    its same-direction neighbour's (within 1 cm) is that neighbour's way (``lines``)."""
    path = network.paths[lane]
    half = 0.5 * float(network.net.lane_f[lane, LF_WIDTH])
    normal = np.column_stack((-np.sin(path[:, 2]), np.cos(path[:, 2])))
    sides = {"left": path[:, :2] + half * normal, "right": path[:, :2] - half * normal}
    src = int(network.net.lane_i[lane, LI_FROM])
    out = {}
    for side, xy in sides.items():
        if src >= 0:  # a connector: from the end of its lane to the start of the next one
            nxt = int(network.successors(lane)[0][0])
            nodes = [ends[(src, 1, side)], *(osm.node(x, y) for x, y in xy[1:-1]),
                     ends[(nxt, 0, side)]]
            out[side] = (osm.way(nodes, {"type": "virtual"}), nodes)
            continue
        column, other_side = SIDES[side]
        neighbour = int(network.net.lane_i[lane, column])
        other = lines.get((neighbour, other_side))
        if other is not None and other[2].shape == xy.shape and np.abs(other[2] - xy).max() < 0.01:
            out[side] = other[:2]
        else:  # dashed between same-direction lanes (lane change allowed), else solid
            nodes = [osm.node(x, y) for x, y in xy]
            subtype = "dashed" if neighbour >= 0 else "solid"
            out[side] = (osm.way(nodes, {"type": "line_thin", "subtype": subtype}), nodes)
            lines[(lane, side)] = (*out[side], xy)
        ends[(lane, 0, side)], ends[(lane, 1, side)] = out[side][1][0], out[side][1][-1]
    return out


def _lanelet_tags(network: Network, lane: int) -> dict[str, str]:
    tags = {"type": "lanelet", "subtype": "road", "location": "urban", "one_way": "yes",
            "participant:vehicle": "yes",
            "speed_limit": f"{network.speed_limit(lane) * MPS_TO_KMH:.2f}",
            "vsim:lane": network.lane_names[lane]}
    if network.net.lane_i[lane, LI_FROM] >= 0:
        turn = float(network.net.lane_f[lane, LF_TURN])
        tags["turn_direction"] = ("straight" if abs(turn) < STRAIGHT_BELOW_RAD
                                  else "left" if turn > 0 else "right")
    return tags


def _signals(network: Network, osm: _Osm, lane: int, p: Lanelet2Params) -> list[int]:
    """Stop lines, light / sign line strings and regulatory elements of one lane; their ids."""
    half = 0.5 * float(network.net.lane_f[lane, LF_WIDTH])
    regs = []
    for sg in network.signals(lane):
        if sg.kind not in ("traffic_light", *SIGN_NAMES):
            continue  # crossings: no crosswalk lanelets yet
        x, y, h, _ = network.point(lane, sg.s_m)
        stop = osm.way(osm.across(x, y, h, half), {"type": "stop_line"})
        if sg.kind == "traffic_light":
            xe, ye, he, _ = network.point(lane, network.lane_length(lane))
            light = osm.way(osm.across(xe, ye, he, 0.3, p.light_height_m),
                            {"type": "traffic_light", "subtype": "red_yellow_green",
                             "height": "1.2", "vsim:light": sg.light})
            rid = light_group_id(network.light_names.index(sg.light))
            regs.append(osm.relation([("way", light, "refers"), ("way", stop, "ref_line")],
                                     {"type": "regulatory_element", "subtype": "traffic_light"},
                                     rid=rid))
        else:
            sign = osm.way(osm.across(x, y, h, 0.3, p.sign_height_m),
                           {"type": "traffic_sign", "subtype": SIGN_NAMES[sg.kind]})
            regs.append(osm.relation([("way", sign, "refers"), ("way", stop, "ref_line")],
                                     {"type": "regulatory_element",
                                      "subtype": "traffic_sign"}))
    return regs


def lanelet2_xml(network: Network, p: Lanelet2Params = Lanelet2Params()) -> str:
    """The whole network as Lanelet2 OSM XML text (see the module docstring)."""
    osm = _Osm(first_id=light_group_id(len(network.light_names)))
    ends: dict[tuple[int, int, str], int] = {}
    lines: dict[tuple[int, str], tuple] = {}
    for lane in range(network.n_lanes):  # street lanes come first: connectors reuse their ends
        bounds = _bounds(network, osm, lane, ends, lines)
        members = [("way", bounds[side][0], side) for side in ("left", "right")]
        members += [("relation", r, "regulatory_element")
                    for r in _signals(network, osm, lane, p)]
        osm.relation(members, _lanelet_tags(network, lane))
    return _xml(osm, p)


def _xml(osm: _Osm, p: Lanelet2Params) -> str:
    ids, x, y, z = (np.array(c) for c in zip(*osm.nodes, strict=True))
    lat, lon, alt = pymap3d.enu2geodetic(x, y, z, p.origin_latitude_deg, p.origin_longitude_deg,
                                       p.origin_altitude_m, deg=True)
    out = ["<?xml version='1.0' encoding='UTF-8'?>",
           "<osm version='0.6' generator='vehicle_sim'>"]
    for i, la, lo, al, xi, yi in zip(ids.tolist(), np.atleast_1d(lat).tolist(),
                                     np.atleast_1d(lon).tolist(), np.atleast_1d(alt).tolist(),
                                     x.tolist(), y.tolist(), strict=True):
        tags = _tags({"local_x": f"{xi:.4f}", "local_y": f"{yi:.4f}", "ele": f"{al:.4f}"})
        out.append(f"  <node id='{i}' visible='true' version='1' lat='{la:.11f}' "
                   f"lon='{lo:.11f}'>{tags}</node>")
    for i, refs, tags in osm.ways:
        nds = "".join(f"<nd ref='{r}'/>" for r in refs)
        out.append(f"  <way id='{i}' visible='true' version='1'>{nds}{_tags(tags)}</way>")
    for i, members, tags in sorted(osm.relations):
        mem = "".join(f"<member type='{t}' ref='{r}' role='{role}'/>" for t, r, role in members)
        out.append(f"  <relation id='{i}' visible='true' version='1'>{mem}{_tags(tags)}"
                   "</relation>")
    out.append("</osm>")
    return "\n".join(out) + "\n"


def _tags(tags: dict[str, str]) -> str:
    return "".join(f"<tag k={quoteattr(k)} v={quoteattr(v)}/>" for k, v in tags.items())


def write_lanelet2(network: Network, path: str | Path, p: Lanelet2Params = Lanelet2Params()
                   ) -> None:
    """Write :func:`lanelet2_xml` to ``path`` (UTF-8)."""
    Path(path).write_text(lanelet2_xml(network, p), encoding="utf-8")
