"""A scripted accident scene in the traffic: paper 002's template planned, driven through physics.

The traffic node owns one :class:`AccidentScene` when its scenario names an accident template
(config/accidents/*.yaml). From ``start_s`` of simulation time the scene steps the
:class:`~vehicle_sim.core.accident.scripted.ScriptedFleet` (000's PD servo on single-track
models) with the traffic's step; its vehicles are published with the traffic agents (message id
``0xFF000000 + k``, k = the vehicle's index in the template) and are bodies of the traffic's crash
world (traffic_crashes). While a vehicle's event chain goes on (a planned collision of its own
more than ``DRIVE_ON_MARGIN_S`` ahead: 002's A4, car A, hit by B, drives on into tree1) it is a
PRESCRIBED body there, as the ego is: it keeps to its plan through a contact (002's kinematic
continuation; 000's servo holds it on its trajectory) and the crash model answers on the other
body alone. Without that, 004's no-slip car-car contact spins A at ~2.2 rad/s away from the tree
and collision 2 never happens (measured, README "Accidents"). From then on it is DYNAMIC: in
contact it gets the crash world's state (``take_over``) and, after its last planned collision,
it is no longer driven (its references are off, 004): the crash world moves it as a crashed
agent.

Frames: the template's coordinates (relative to the road centre) go to the map by ``origin_m`` and
``heading_rad``; states are in the map frame, SI units.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np

from vehicle_sim.core.accident.planners.placement import segment_distance
from vehicle_sim.core.accident.planners.plan import PlannedCollision
from vehicle_sim.core.accident.scripted import ScriptedFleet
from vehicle_sim.core.accident.template import AccidentTemplate, load_template
from vehicle_sim.core.config import ConfigError
from vehicle_sim.core.traffic.mapfile import StaticObject as MapObject
from vehicle_sim.core.vehicle.params import VehicleParams

# vehicle file of each template kind, relative to config/ (the traffic node loads them)
VEHICLE_FILES = {"car": "vehicles/medium_car.yaml", "truck": "vehicles/truck.yaml"}
KIND_CODES = {"car": 0, "truck": 1}  # template kind -> TrafficAgent.KIND_CAR / KIND_TRUCK
SCRIPTED_OWNER = 255  # owner id of scripted vehicles' uids: message ids 0xFF000000 + k
SCRIPTED_ID_BASE = SCRIPTED_OWNER << 24  # TrafficAgent.id of vehicle 0 (traffic_msgs.agent_ids)
UID_BLOCK_BITS = 40  # traffic.sim.UID_BLOCK = 1 << 40
# a contact this close before a vehicle's last planned collision is that collision (a choice:
# the servo tracks its plan within ~0.3 s, test_accident_scripted)
DRIVE_ON_MARGIN_S = 0.3
MAX_CATCH_UP_S = 5.0  # bound of the fleet time made up in one step (a choice: a stall longer
# than this is not a scene any more; the traffic's own catch-up is bounded likewise)


def scripted_uid(k: int) -> int:
    """Core uid of the scene's vehicle k (in the block of owner SCRIPTED_OWNER)."""
    return (SCRIPTED_OWNER << UID_BLOCK_BITS) | k


def scripted_names(template: AccidentTemplate) -> dict[int, str]:
    """TrafficAgent.id -> "scripted/<vehicle id>" of a template's vehicles (plan order)."""
    return {SCRIPTED_ID_BASE + k: f"scripted/{v.id}" for k, v in enumerate(template.vehicles)}


def planned_pairs(template: AccidentTemplate) -> set[frozenset[str]]:
    """The {actor, victim} body names (scripted/<id>, static/<id>) of the planned collisions."""
    statics = {o.id for o in template.static_objects}

    def body(name: str) -> str:
        return f"static/{name}" if name in statics else f"scripted/{name}"
    return {frozenset((body(c.actor), body(c.victim))) for c in template.collisions}


# a choice: the template's object and the map's are one if their centres (or the point and the
# footprint) are this close; a car aimed 0.5 m off a 0.4 m trunk still hits it with its width
STATIC_MATCH_M = 0.5


def _distance_m(obj: MapObject, x: float, y: float) -> float:
    """From (x, y) to a map object's body: its circle's centre, or its footprint (0 inside)."""
    if not obj.footprint:
        return math.hypot(x - obj.x_m, y - obj.y_m)
    ring = np.asarray(obj.footprint, dtype=float)
    edges = list(zip(ring, np.roll(ring, -1, axis=0), strict=True))
    crossings = sum((a[1] > y) != (b[1] > y)  # even-odd ray casting
                    and x < a[0] + (y - a[1]) * (b[0] - a[0]) / (b[1] - a[1]) for a, b in edges)
    if crossings % 2:
        return 0.0
    return min(segment_distance(a, b, np.array([x, y])) for a, b in edges)


def check_statics(scene: AccidentScene, map_objects: Sequence[MapObject]) -> None:
    """ConfigError unless every static object a planned collision hits is a body of the map
    where the scene puts it (the crash physics has only the map's bodies: a tree the map has
    not, or has elsewhere, after accident_origin / accident_heading moved the scene, would
    never be hit, without a word)."""
    bodies = {o.id: o for o in map_objects}
    where = scene.fleet.statics_in_map()
    hit = [c.victim for c in scene.template.collisions if c.victim in where]
    for name in dict.fromkeys(hit):
        x, y = where[name]
        key = f"static_objects[{[o.id for o in scene.template.static_objects].index(name)}]"
        obj = bodies.get(name)
        if obj is None:
            raise ConfigError(scene.template.source, key,
                              f"{name} is hit by a planned collision but the map has no static "
                              f"object {name}")
        off_m = _distance_m(obj, x, y)
        if off_m > STATIC_MATCH_M:
            raise ConfigError(scene.template.source, key,
                              f"{name} is at ({x:.2f}, {y:.2f}) m in the map frame (with the "
                              f"scene's origin and heading) but the map's {name} is "
                              f"{off_m:.2f} m from there (at most {STATIC_MATCH_M:g} m)")


class AccidentScene:
    """The scripted vehicles of one accident template (see the module docstring)."""

    def __init__(self, template_file: str | Path, vehicles: Mapping[str, VehicleParams],
                 start_s: float = 1.0, origin_m: tuple[float, float] = (0.0, 0.0),
                 heading_rad: float = 0.0):
        self.template = load_template(template_file)
        self.vehicles = dict(vehicles)
        self.fleet = ScriptedFleet.from_template(self.template, vehicles, origin_m, heading_rad)
        # load the models' and the servo's compiled code now, on a throwaway fleet: the first
        # step would otherwise stall the traffic node (2.4 s of wall time measured on a loaded
        # 2-core machine), which in real time then skips steps
        ScriptedFleet.from_template(self.template, vehicles, origin_m, heading_rad).step(0.01)
        self.start_ns = round(start_s * 1e9)
        self.names = self.fleet.state().names
        self.uids = np.array([scripted_uid(k) for k in range(len(self.names))], dtype=np.int64)
        self._kinds = self.fleet.state().kind
        self._crashed: dict[int, np.ndarray] = {}  # index -> (x, y, yaw, vx, vy, yaw_rate)
        self._moved: set[str] = set()  # moved by the crash world over the current step
        self._started = False  # before start_s the vehicles stand at their run-up start
        # the last planned collision of each vehicle, as actor or victim [s, fleet clock]
        self._last_collision_s = {n: max((c.time_s for c in self.fleet.collisions
                                          if n in (c.actor, c.victim)), default=0.0)
                                  for n in self.names}

    @property
    def planned(self) -> tuple[PlannedCollision, ...]:
        """The planned collisions, times in simulation time [s]."""
        return tuple(replace(c, time_s=c.time_s + self.start_ns * 1e-9)
                     for c in self.fleet.collisions)

    def step(self, t_ns: int, dt_s: float) -> None:
        """The traffic steps to ``t_ns`` by dt_s: drive the fleet once its start has come, so
        that its clock is ``t_ns - start_ns``: steps the traffic skipped (it fell behind sim time
        in real time, or joined late) are made up here in steps of dt_s, at most
        ``MAX_CATCH_UP_S``; the vehicles the crash world moved over this step are excepted in
        the last one."""
        if t_ns > self.start_ns:
            dt_ns = max(1, round(dt_s * 1e9))
            behind_ns = t_ns - self.start_ns - round(self.fleet.time_s * 1e9)
            n = min(max(1, round(behind_ns / dt_ns)), max(1, round(MAX_CATCH_UP_S / dt_s)))
            for k in range(n):
                self.fleet.step(dt_s, frozenset(self._moved) if k == n - 1 else frozenset())
            self._started = True
        self._moved.clear()

    def params_of(self, k: int) -> VehicleParams:
        return self.vehicles[self._kinds[k]]

    def states(self) -> np.ndarray:
        """(n, 6) x, y, yaw, vx, vy, yaw_rate of every vehicle (map frame; crashed: the crash
        world's)."""
        s = self.fleet.state()
        out = np.column_stack((s.x_m, s.y_m, s.yaw_rad, s.vx_mps, s.vy_mps, s.yaw_rate_radps))
        if not self._started:  # parked until start_s (the models hold their run-up speed)
            out[:, 3:] = 0.0
        for k, row in self._crashed.items():
            out[k] = row
        return out

    def sizes(self) -> np.ndarray:
        s = self.fleet.state()
        return np.column_stack((s.length_m, s.width_m))

    def prescribed(self) -> np.ndarray:
        """(n,) bool: the vehicles whose event chain goes on (module docstring): PRESCRIBED
        bodies of the crash world."""
        t_s = self.fleet.time_s
        return np.array([k not in self._crashed and
                         t_s < self._last_collision_s[n] - DRIVE_ON_MARGIN_S
                         for k, n in enumerate(self.names)], dtype=bool)

    def take_over(self, uid: int, state: np.ndarray) -> None:
        """Vehicle ``uid``, a dynamic body (``prescribed`` is false: at most
        ``DRIVE_ON_MARGIN_S`` before its last planned collision, or after it), was in contact
        and is now in ``state`` (6 values): the crash world owns it from now on."""
        k = int(np.flatnonzero(self.uids == uid)[0])
        self._moved.add(self.names[k])
        if k not in self._crashed:
            self.fleet.hand_over(self.names[k])
        self._crashed[k] = np.asarray(state, dtype=float).copy()

    def agents(self) -> dict[str, np.ndarray]:
        """The vehicles in TrafficSim.agents()'s format (for the traffic's messages)."""
        s, n = self.states(), len(self.names)
        c, si = np.cos(s[:, 2]), np.sin(s[:, 2])
        crashed = np.zeros(n, dtype=bool)
        crashed[list(self._crashed)] = True
        size = self.sizes()
        return {"uid": self.uids.copy(), "x": s[:, 0], "y": s[:, 1], "yaw": s[:, 2],
                "speed": c * s[:, 3] + si * s[:, 4], "lateral_speed": -si * s[:, 3] + c * s[:, 4],
                "yaw_rate": s[:, 5], "steer": np.zeros(n), "accel": np.zeros(n),
                "lane": np.full(n, -1, dtype=np.int64), "s": np.zeros(n),
                "profile": np.ones(n, dtype=np.int64), "dynamic": np.ones(n, dtype=np.int64),
                "length": size[:, 0], "width": size[:, 1], "ghost": np.zeros(n, dtype=bool),
                "crashed": crashed, "instruction": np.zeros(n, dtype=np.int64),
                "kind": np.array([KIND_CODES[k] for k in self._kinds], dtype=np.int64)}
