"""The urban map file format (YAML) of paper 004, section 2, validated into frozen dataclasses.

Frame: a flat ENU map frame (x east, y north) in metres; headings in radians from +x, counter-
clockwise (REP-103). Right-hand traffic is a convention of the generator, not of the format.

Top level (see ``config/maps/README.md`` for a worked example)::

    format_version: 1
    name: urban_grid
    streets:            # 004 "Streets": a section of street between two junctions
      - id: h_0_0
        road: avenue_0          # lights at a junction are grouped by road (004 sec. 6.4)
        speed_limit_mps: 13.89
        reference: {x_m: 0, y_m: 0, heading_rad: 0,
                    pieces: [{length_m: 80, curvature_1pm: 0}]}   # lines (k=0) and arcs (k!=0)
        lanes:          # 004 "Lanes": direction, width, bus lane
          - {id: h_0_0_f0, offset_m: -1.75, width_m: 3.5, direction: forward}
    nodes:              # 004 "Nodes": junction connectivities with probabilities
      - id: j_0_1
        x_m: 90
        y_m: 0
        connections: [{from_lane: h_0_0_f0, to_lane: h_0_1_f0, probability: 0.6}, ...]
    signals:            # 004 "Signals": the lanes each affects and the position on them
      - {id: tl_1, kind: traffic_light, lanes: [h_0_0_f0], distance_from_end_m: 0}
    static_objects:     # obstacles for accidents, footprints for the GPS model
      - {id: t1, kind: tree, x_m: 5, y_m: 9, radius_m: 0.4}
      - {id: b1, kind: building, footprint: [[10, 10], [60, 10], [60, 60], [10, 60]]}

A lane's centre line is its street reference offset by ``offset_m`` (+ left); ``direction:
backward`` drives it against the reference. Junction connector paths (from the end of
``from_lane`` to the start of ``to_lane``) are generated as line-arc-line fillets
(``geometry.fillet``). Probabilities of the connections leaving one lane must sum to 1.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from vehicle_sim.core.config import build, id_problem, load_yaml, shown_name, spec
from vehicle_sim.core.traffic.geometry import MAX_DTHETA_RAD, MAX_STEP_M

# Geometry bounds: what a map may add up to, so building the network cannot exhaust memory. A
# 20 km square city: the traffic neighbour grid (20 m cells) then has at most ~1e6 cells; a
# lane length of 2,000 km in total (a large city: Manhattan has ~800 km of streets) is ~100 MB
# of sampled centre lines.
MAX_COORD_M = 10_000.0
MAX_PIECE_M = 10_000.0
MAX_TOTAL_LANE_M = 2_000_000.0
# ... and what they cost once sampled (geometry.sample_pieces: a point per 5 m of line, per
# 0.08 rad of arc; ~130 B a point in the network): 1e6 points is ~130 MB per node that builds
# the network, and the 2,000 km above as straight lines is 400,000 (a 10 km arc of radius 1 m
# alone would be 125,000)
MAX_TOTAL_POINTS = 1_000_000
# a junction's connections are paired with each other for their conflicts (network: n^2): a
# six-arm junction of four lanes each way, every lane to every exit lane, is 24 x 20 = 480
MAX_NODE_CONNECTIONS = 500
MAX_STATIC_OBJECTS = 10_000  # the crash world's start takes ~0.7 ms each (100,000: 68 s)
MAX_FOOTPRINT_POINTS = 1_000  # a surveyed building outline has tens (pybullet's hull: < 65k)
MAX_LANE_BEND = 0.9  # offset * curvature of a lane on an arc's inside: radius >= 1/10 the street's
MAX_SPEED_LIMIT_MPS = 40.0  # 144 km/h: above any urban speed limit (a choice)
SIGNAL_KINDS = ("traffic_light", "stop", "give_way", "crossing")
OBJECT_KINDS = ("tree", "pole", "barrier", "building")


@dataclass(frozen=True)
class Piece:
    """One entity of a centre line: a straight line (curvature 0) or a circular arc."""

    length_m: float = spec(unit="m", gt=0.0, le=MAX_PIECE_M)
    curvature_1pm: float = spec(0.0, unit="1/m", ge=-1.0, le=1.0)
    """+ turns left"""


@dataclass(frozen=True)
class Reference:
    """Start pose and pieces of a street's reference line."""

    x_m: float = spec(unit="m", ge=-MAX_COORD_M, le=MAX_COORD_M)
    y_m: float = spec(unit="m", ge=-MAX_COORD_M, le=MAX_COORD_M)
    heading_rad: float = spec(unit="rad", ge=-7.0, le=7.0)
    pieces: tuple[Piece, ...] = spec(unit="")

    def __post_init__(self) -> None:
        if not self.pieces:
            raise ValueError("pieces: at least one piece is required")
        for i, (x, y) in enumerate(self.piece_ends()):
            if max(abs(x), abs(y)) > MAX_COORD_M:  # an arc bulges at most L/2 past its chord
                raise ValueError(f"pieces[{i}] ends at ({x:.0f}, {y:.0f}) m, more than "
                                 f"{MAX_COORD_M:g} m from the origin")

    def piece_ends(self) -> list[tuple[float, float]]:
        """End point [m] of each piece (lines and arcs, exact)."""
        x, y, h, ends = self.x_m, self.y_m, self.heading_rad, []
        for piece in self.pieces:
            k, length = piece.curvature_1pm, piece.length_m
            if abs(k) < 1e-12:
                x, y = x + length * math.cos(h), y + length * math.sin(h)
            else:
                h1 = h + k * length
                x, y = x + (math.sin(h1) - math.sin(h)) / k, y + (math.cos(h) - math.cos(h1)) / k
                h = h1
            ends.append((x, y))
        return ends


@dataclass(frozen=True)
class Lane:
    """A lane of a street (004: direction of flow, width, bus lane)."""

    id: str = spec()
    offset_m: float = spec(unit="m", ge=-30, le=30)
    """lateral offset from the reference, + left"""
    width_m: float = spec(3.5, unit="m", gt=1.5, le=6.0)
    direction: str = spec("forward", choices=("forward", "backward"))
    speed_limit_mps: float = spec(0.0, unit="m/s", ge=0.0, le=MAX_SPEED_LIMIT_MPS)
    """0: the street's limit"""
    bus_lane: bool = spec(False)


@dataclass(frozen=True)
class Street:
    """A section of street between two junctions (004 sec. 2)."""

    id: str = spec()
    reference: Reference = spec()  # noqa: RUF009 (required; spec() carries metadata)
    lanes: tuple[Lane, ...] = spec()
    speed_limit_mps: float = spec(13.89, unit="m/s", gt=0.0, le=MAX_SPEED_LIMIT_MPS)
    road: str = spec("")
    """road name grouping lights at a junction; empty: the street id"""


@dataclass(frozen=True)
class Connection:
    """A connectivity of a node: from the end of one lane to the start of another."""

    from_lane: str = spec()
    to_lane: str = spec()
    probability: float = spec(unit="-", ge=0.0, le=1.0)


@dataclass(frozen=True)
class Node:
    """A junction (004 "Nodes") with its connectivities and their probabilities."""

    id: str = spec()
    x_m: float = spec(unit="m", ge=-MAX_COORD_M, le=MAX_COORD_M)
    y_m: float = spec(unit="m", ge=-MAX_COORD_M, le=MAX_COORD_M)
    connections: tuple[Connection, ...] = spec()
    radius_m: float = spec(12.0, unit="m", gt=0, le=200.0)
    """extent of the junction box (ego yield zone)"""


@dataclass(frozen=True)
class Signal:
    """A sign or signal and the lanes it affects (004 sec. 2 and 6.3.3)."""

    id: str = spec()
    kind: str = spec(choices=SIGNAL_KINDS)
    lanes: tuple[str, ...] = spec()
    distance_from_end_m: float = spec(0.0, unit="m", ge=0, le=MAX_PIECE_M)
    """position before each lane's end"""
    signalised: bool = spec(False)
    """crossing only: has pedestrian lights (inverse of cars)"""


@dataclass(frozen=True)
class StaticObject:
    """A tree, pole, barrier (x, y, radius) or building/barrier footprint polygon."""

    id: str = spec()
    kind: str = spec(choices=OBJECT_KINDS)
    x_m: float = spec(0.0, unit="m", ge=-MAX_COORD_M, le=MAX_COORD_M)
    y_m: float = spec(0.0, unit="m", ge=-MAX_COORD_M, le=MAX_COORD_M)
    radius_m: float = spec(0.0, unit="m", ge=0.0, le=100.0)
    footprint: tuple[tuple[float, float], ...] = spec((), unit="m", ge=-MAX_COORD_M,
                                                        le=MAX_COORD_M)

    def __post_init__(self) -> None:
        if self.kind == "building" and len(self.footprint) < 3:
            raise ValueError(f"static object {shown_name(self.id)}: footprint needs >= 3 points")
        if self.kind in ("tree", "pole") and self.radius_m <= 0.0:
            raise ValueError(f"static object {shown_name(self.id)}: radius_m must be > 0 for a "
                             f"{self.kind}")
        if self.kind == "barrier" and len(self.footprint) < 2 and self.radius_m <= 0.0:
            raise ValueError(f"static object {shown_name(self.id)}: a barrier needs a footprint of "
                             ">= 2 points or radius_m > 0")
        if len(self.footprint) > MAX_FOOTPRINT_POINTS:
            raise ValueError(f"static object {shown_name(self.id)}: {len(self.footprint)} "
                             f"footprint points, at most {MAX_FOOTPRINT_POINTS}")


@dataclass(frozen=True)
class MapSpec:
    """A whole map file; cross-references are checked in ``__post_init__``."""

    format_version: int = spec(ge=1, le=1)
    streets: tuple[Street, ...] = spec()
    nodes: tuple[Node, ...] = spec(())
    signals: tuple[Signal, ...] = spec(())
    static_objects: tuple[StaticObject, ...] = spec(())
    name: str = spec("")

    def __post_init__(self) -> None:
        if len(self.static_objects) > MAX_STATIC_OBJECTS:
            raise ValueError(f"static_objects: {len(self.static_objects)}, at most "
                             f"{MAX_STATIC_OBJECTS}")
        lanes = _unique([(f"streets[{i}].lanes[{j}].id", ln.id) for i, s in enumerate(self.streets)
                         for j, ln in enumerate(s.lanes)], "lane")
        if not lanes:
            raise ValueError("streets: a map needs at least one lane")
        _unique([(f"streets[{i}].id", s.id) for i, s in enumerate(self.streets)], "street")
        _unique([(f"nodes[{i}].id", n.id) for i, n in enumerate(self.nodes)], "node")
        _unique([(f"signals[{i}].id", s.id) for i, s in enumerate(self.signals)], "signal")
        _unique([(f"static_objects[{i}].id", o.id) for i, o in enumerate(self.static_objects)],
                "static object")
        total = sum(sum(p.length_m for p in s.reference.pieces) * len(s.lanes)
                    for s in self.streets)
        if total > MAX_TOTAL_LANE_M:
            raise ValueError(f"streets: {total / 1e3:.0f} km of lanes in total, more than the "
                             f"{MAX_TOTAL_LANE_M / 1e3:.0f} km a map may have")
        points = sum(_points(s.reference) * len(s.lanes) for s in self.streets)
        if points > MAX_TOTAL_POINTS:
            raise ValueError(f"streets: their lanes sample to {points} points (a point per "
                             f"{MAX_STEP_M:g} m and per {MAX_DTHETA_RAD:g} rad of turn), more "
                             f"than the {MAX_TOTAL_POINTS} a map may have")
        for i, s in enumerate(self.streets):
            _check_bends(i, s)
        for i, n in enumerate(self.nodes):
            _check_node(i, n, lanes)
        for i, sg in enumerate(self.signals):
            _unique([(f"signals[{i}].lanes[{j}]", name) for j, name in enumerate(sg.lanes)],
                    "lane")
            for j, name in enumerate(sg.lanes):
                if name not in lanes:
                    raise ValueError(f"signals[{i}].lanes[{j}]: unknown lane {shown_name(name)}")


def _points(ref: Reference) -> int:
    """Points of the reference once sampled (geometry.sample_pieces)."""
    return 1 + sum(max(1, math.ceil(p.length_m / MAX_STEP_M),
                       math.ceil(abs(p.curvature_1pm) * p.length_m / MAX_DTHETA_RAD))
                   for p in ref.pieces)


def _check_bends(i: int, street: Street) -> None:
    """A lane offset to the inside of an arc (offset and curvature of one sign: its curvature
    is k / (1 - k offset), geometry.offset_path) by nearly the radius degenerates to a point;
    to the outside it only widens."""
    for j, ln in enumerate(street.lanes):
        k = max(p.curvature_1pm * ln.offset_m for p in street.reference.pieces)
        if k > MAX_LANE_BEND:
            raise ValueError(f"streets[{i}].lanes[{j}].offset_m: {ln.offset_m:g} m to the "
                             f"inside of an arc of radius {abs(ln.offset_m) / k:.3g} m; a lane "
                             f"keeps at most {MAX_LANE_BEND:g} of the radius as offset")


def _unique(items: list[tuple[str, str]], what: str) -> set[str]:
    seen: set[str] = set()
    for key, name in items:
        problem = id_problem(name)
        if problem:
            raise ValueError(f"{key}: {what} id {problem}")
        if name in seen:
            raise ValueError(f"{key}: duplicate {what} id {shown_name(name)}")
        seen.add(name)
    return seen


def _check_node(i: int, node: Node, lanes: set[str]) -> None:
    if len(node.connections) > MAX_NODE_CONNECTIONS:
        raise ValueError(f"nodes[{i}].connections: {len(node.connections)}, at most "
                         f"{MAX_NODE_CONNECTIONS} per junction")
    pairs: set[tuple[str, str]] = set()
    sums: dict[str, float] = {}
    for j, c in enumerate(node.connections):
        if (c.from_lane, c.to_lane) in pairs:
            raise ValueError(f"nodes[{i}].connections[{j}]: {shown_name(c.from_lane)} to "
                             f"{shown_name(c.to_lane)} a second time")
        pairs.add((c.from_lane, c.to_lane))
        for field in ("from_lane", "to_lane"):
            if getattr(c, field) not in lanes:
                raise ValueError(f"nodes[{i}].connections[{j}].{field}: unknown lane "
                                 f"{shown_name(getattr(c, field))}")
        sums[c.from_lane] = sums.get(c.from_lane, 0.0) + c.probability
    for lane, total in sums.items():
        if abs(total - 1.0) > 1e-6:
            raise ValueError(f"nodes[{i}].connections: probabilities leaving lane "
                             f"{shown_name(lane)} sum to {total:.6g}, not 1")


def load_map(path: str | Path) -> MapSpec:
    """Read and validate a map file; any problem raises ConfigError naming file, key, reason."""
    return build(MapSpec, load_yaml(path), source=str(path))


def map_from_dict(data: dict, source: str = "<map>") -> MapSpec:
    """Validate an in-memory map mapping (as ``gridgen`` produces) into a MapSpec."""
    return build(MapSpec, data, source=source)
