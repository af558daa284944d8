"""Accident templates: paper 002's formal accident description (model M) as a YAML file.

M = {static objects, dynamic objects, collisions ordered in time} (002 sec. 3):

    format_version: 1
    name: a4
    road: crossroad          # 002's ROAD kind: crossroad | straight_road | turn_left | turn_right
    y_axis: north            # north (ENU, default) or south (y grows southwards, as 002's A4
                             # coordinates read; converted to ENU by the pre-planner)
    speed_mps: 10.0          # cruise speed of the fastest vehicle before its first collision
    t_split: 0.8             # 002's T_split: time value of the first collision (0 < T_split < 1)
    static_objects:          # kind in 002's set; trees are cylinders (002 sec. 7)
      - {id: tree1, kind: tree, x_m: 5.0, y_m: -5.0, radius_m: 0.4}
    vehicles:                # 002's dynamic objects: kind, initial direction, event chain
      - {id: vehicleB, kind: car, direction: east, events: [driving_forward]}
    collisions:              # in time order; position_m only where the text gives it
      - {actor: vehicleB, actor_part: front, victim: vehicleA, victim_part: leftside,
         position_m: [1.0, 1.0]}

Coordinates are relative to the road's centre (the crossroad centre) in metres. Validation:
field types and bounds by :func:`vehicle_sim.core.config.build`, cross references here (unique
names, known actors and victims, parts, one event chain per vehicle that the planners can read);
geometric problems (an actor that can never reach its collision, collisions out of time order,
overlapping start positions) by the planners (``core/accident/planners``). Every problem is one
:class:`~vehicle_sim.core.config.ConfigError` naming the file, the key and the reason.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from vehicle_sim.core.accident.detect import PART_NAMES
from vehicle_sim.core.config import ConfigError, build, id_problem, load_yaml, spec

ROAD_KINDS = ("crossroad", "straight_road", "turn_left", "turn_right")  # 002's road kinds
OBJECT_KINDS = ("tree", "traffic_light", "pedestrian_crossing")  # 002's other static kinds
VEHICLE_KINDS = ("car", "truck")
DIRECTIONS = ("north", "south", "east", "west")
EVENT_KINDS = ("driving_forward", "stop", "turn_left", "turn_right", "overtake",
               "change_lane_left", "change_lane_right")
MAX_COORD_M = 1000.0  # a scene is a junction, not a city
MAX_VEHICLES = 12  # 002: at most 3 per approach, 4 approaches
MAX_EVENTS = 8
MAX_COLLISIONS = 20
MAX_STATICS = 50  # 002's scenes hold a few trees or poles; the planners pair them (n^2)


@dataclass(frozen=True)
class StaticObject:
    """A static object of 002: kind and position; a tree is a cylinder of radius_m (002 sec. 7)."""

    id: str = spec()
    kind: str = spec(choices=OBJECT_KINDS)
    x_m: float = spec(unit="m", ge=-MAX_COORD_M, le=MAX_COORD_M)
    y_m: float = spec(unit="m", ge=-MAX_COORD_M, le=MAX_COORD_M)
    radius_m: float = spec(0.4, unit="m", gt=0.0, le=5.0)
    """cylinder radius (a choice: 0.4 m, the trees of urban_grid)"""


@dataclass(frozen=True)
class Vehicle:
    """A dynamic object of 002: kind, initial direction (of travel) and event chain."""

    id: str = spec()
    kind: str = spec(choices=VEHICLE_KINDS)
    direction: str = spec(choices=DIRECTIONS)
    """initial direction of travel"""
    events: tuple[str, ...] = spec(choices=EVENT_KINDS)
    """002's event chain, in order"""
    start_distance_m: float = spec(0.0, unit="m", ge=0.0, le=200.0)
    """0: the position planner's 20 / 26 / 32 m"""


@dataclass(frozen=True)
class Collision:
    """002's collision (actor, victim, actor part, victim part, (x, y) when given)."""

    actor: str = spec()
    actor_part: str = spec(choices=PART_NAMES)
    victim: str = spec()
    victim_part: str = spec(choices=PART_NAMES)
    position_m: tuple[float, ...] = spec((), unit="m", ge=-MAX_COORD_M, le=MAX_COORD_M)
    """[x, y] or empty (derived by the planner)"""


@dataclass(frozen=True)
class AccidentTemplate:
    """A whole template file (model M); ``source`` names the file in every error."""

    format_version: int = spec(ge=1, le=1)
    name: str = spec()
    road: str = spec(choices=ROAD_KINDS)
    vehicles: tuple[Vehicle, ...] = spec()
    collisions: tuple[Collision, ...] = spec()
    static_objects: tuple[StaticObject, ...] = spec(())
    y_axis: str = spec("north", choices=("north", "south"))
    """direction of +y"""
    speed_mps: float = spec(10.0, unit="m/s", ge=1.0, le=30.0)
    """cruise speed of the fastest vehicle (a choice: urban 36 km/h)"""
    t_split: float = spec(0.8, gt=0.0, lt=1.0)
    """002's T_split (time value of collision 1)"""
    source: str = dataclasses.field(default="<template>", init=False)


def load_template(path: str | Path) -> AccidentTemplate:
    """Read and validate an accident template; problems raise one ConfigError line."""
    return template_from_dict(load_yaml(path), source=str(path))


def template_from_dict(data: dict, source: str = "<template>") -> AccidentTemplate:
    """Validate an in-memory template mapping (types, bounds, then cross references)."""
    tpl = build(AccidentTemplate, data, source=source)
    object.__setattr__(tpl, "source", source)
    _check_sizes(tpl)
    _check_names(tpl)
    for i, v in enumerate(tpl.vehicles):
        _check_events(tpl, i, v)
    for i, c in enumerate(tpl.collisions):
        _check_collision(tpl, i, c)
    return tpl


def _fail(tpl: AccidentTemplate, key: str, reason: str) -> None:
    raise ConfigError(tpl.source, key, reason)


def _check_sizes(tpl: AccidentTemplate) -> None:
    limits = (("vehicles", tpl.vehicles, MAX_VEHICLES), ("collisions", tpl.collisions,
              MAX_COLLISIONS), ("static_objects", tpl.static_objects, MAX_STATICS))
    for key, items, most in limits:
        if len(items) > most:
            _fail(tpl, key, f"{len(items)} entries, at most {most}")
    if not tpl.vehicles:
        _fail(tpl, "vehicles", "at least one vehicle is needed")
    if not tpl.collisions:
        _fail(tpl, "collisions", "at least one collision is needed (it is an accident)")


def _check_names(tpl: AccidentTemplate) -> None:
    seen: dict[str, str] = {}
    named = [(f"vehicles[{i}].id", v.id) for i, v in enumerate(tpl.vehicles)]
    named += [(f"static_objects[{i}].id", s.id) for i, s in enumerate(tpl.static_objects)]
    for key, name in named:
        problem = id_problem(name)  # names go into log lines as they are
        if problem:
            _fail(tpl, key, f"name {problem}")
        if name in seen:
            _fail(tpl, key, f"duplicate name {name!r} (also {seen[name]})")
        seen[name] = key


def _check_events(tpl: AccidentTemplate, i: int, v: Vehicle) -> None:
    key = f"vehicles[{i}].events"
    if not v.events:
        _fail(tpl, key, "empty event chain (use [stop] for a stopped vehicle)")
    if len(v.events) > MAX_EVENTS:
        _fail(tpl, key, f"{len(v.events)} events, at most {MAX_EVENTS}")
    if "stop" in v.events[:-1]:
        _fail(tpl, key, f"'stop' must be the last event of {v.id!r}'s chain")


def _check_collision(tpl: AccidentTemplate, i: int, c: Collision) -> None:
    vehicles = {v.id for v in tpl.vehicles}
    statics = {s.id for s in tpl.static_objects}
    key = f"collisions[{i}]"
    if c.actor not in vehicles:
        why = "is a static object" if c.actor in statics else "is not a vehicle of this template"
        _fail(tpl, f"{key}.actor", f"{c.actor!r} {why} (vehicles: {', '.join(sorted(vehicles))})")
    if c.victim not in vehicles | statics:
        _fail(tpl, f"{key}.victim", f"unknown object {c.victim!r} (known: "
                                    f"{', '.join(sorted(vehicles | statics))})")
    if c.victim == c.actor:
        _fail(tpl, f"{key}.victim", f"{c.actor!r} cannot collide with itself")
    if c.victim in statics and c.victim_part != "unknown":
        _fail(tpl, f"{key}.victim_part", f"a static object has no part {c.victim_part!r} "
                                         f"(002: 'unknown')")
    if c.victim in statics and c.position_m:
        _fail(tpl, f"{key}.position_m", "a collision with a static object takes the object's "
                                        "position (002 sec. 7); leave position_m out")
    if len(c.position_m) not in (0, 2):
        _fail(tpl, f"{key}.position_m", f"expected [x, y] or nothing, got {len(c.position_m)} "
                                        f"numbers")
