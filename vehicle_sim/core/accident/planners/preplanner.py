"""Paper 002's pre-planner: fills defaults and refuses contradictions of a template.

002 sec. 4.1: "if some values are not given ... or some values imply a contradiction (a vehicle
turning left on a straight road), this planner tries to find (default) values and to solve the
contradictions". Here: coordinates go to ENU (``y_axis: south`` flips y), an actor part
``unknown`` becomes ``front`` (a vehicle hits with its front unless told otherwise, as 002's A4
text turns "B hits A" into B's front), vehicle sizes come from the vehicle parameter files;
contradictions are refused with one ConfigError line: turns on a straight road, north/south
travel on the (east-west) straight road, road kinds the position planner cannot lay out.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from vehicle_sim.core.accident.template import AccidentTemplate, StaticObject
from vehicle_sim.core.config import ConfigError

PLANNED_ROADS = ("crossroad", "straight_road")


@dataclass(frozen=True)
class SceneVehicle:
    """A vehicle of the scene: name, kind, direction of travel, events, box size [m]."""

    id: str
    kind: str
    direction: str
    events: tuple[str, ...]
    length_m: float
    width_m: float
    start_distance_m: float  # 0: the position planner decides
    key: str  # template key, for error lines


@dataclass(frozen=True)
class SceneCollision:
    """A collision with ENU position (None: derived by the accident planner)."""

    index: int
    actor: str
    actor_part: str
    victim: str
    victim_part: str
    position_m: tuple[float, float] | None


@dataclass(frozen=True)
class Scene:
    """The pre-planned template: everything in ENU, defaults filled, contradictions refused."""

    source: str
    name: str
    road: str
    vehicles: tuple[SceneVehicle, ...]
    objects: tuple[StaticObject, ...]  # the template's static objects (cylinders, 002 sec. 7), ENU
    collisions: tuple[SceneCollision, ...]
    speed_mps: float
    t_split: float


def preplan(tpl: AccidentTemplate, sizes_m: Mapping[str, tuple[float, float]]) -> Scene:
    """The Scene of a validated template; sizes_m: vehicle kind -> (length, width) [m]."""
    if tpl.road not in PLANNED_ROADS:
        raise ConfigError(tpl.source, "road", f"road kind {tpl.road!r} cannot be laid out by "
                                              f"the position planner ({', '.join(PLANNED_ROADS)})")
    ysign = -1.0 if tpl.y_axis == "south" else 1.0
    vehicles = []
    for i, v in enumerate(tpl.vehicles):
        key = f"vehicles[{i}]"
        if tpl.road == "straight_road":
            if v.direction in ("north", "south"):
                raise ConfigError(tpl.source, f"{key}.direction", f"{v.direction!r} on a "
                                  f"straight road (it runs east-west)")
            for k, e in enumerate(v.events):
                if e in ("turn_left", "turn_right"):
                    raise ConfigError(tpl.source, f"{key}.events[{k}]",
                                      f"{e} on a straight road (002's contradiction)")
        if v.kind not in sizes_m:
            raise ConfigError(tpl.source, f"{key}.kind", f"no vehicle size for {v.kind!r}")
        length, width = sizes_m[v.kind]
        vehicles.append(SceneVehicle(v.id, v.kind, v.direction, v.events, length, width,
                                     v.start_distance_m, key))
    objects = tuple(replace(s, y_m=ysign * s.y_m) for s in tpl.static_objects)
    collisions = tuple(
        SceneCollision(i, c.actor, "front" if c.actor_part == "unknown" else c.actor_part,
                       c.victim, c.victim_part,
                       (c.position_m[0], ysign * c.position_m[1]) if c.position_m else None)
        for i, c in enumerate(tpl.collisions))
    return Scene(tpl.source, tpl.name, tpl.road, tuple(vehicles), objects, collisions,
                 tpl.speed_mps, tpl.t_split)
