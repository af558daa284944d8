"""The accident node's law (paper 004 sec. 7.1 contacts reported as paper 002 collisions), free of
ROS: used by nodes.accident_node and by the lockstep engine (core.engine), one place.

- Ego contacts on every ego state, at its stamp (simulation time), against the current agents
  moved at constant body-frame velocity and yaw rate to that stamp (at most
  ``max_extrapolation_s``: the traffic runs at a lower rate and may lag).
- Contacts between two agents on every agent array, at its own stamp: its agents not moved (a
  constant-speed guess would invent rear-end contacts in braking queues), other shards' current
  agents moved to it as for the ego; ``agents_vs_agents``.
- Two detectors, one per stream of stamps (two episode books); a stamp older than the
  detector's last one is a new run (its episodes start over).
- Names: the ego ``ego_name``, an agent "agent/<id>" (a scripted vehicle "scripted/<id>"), a
  static object "static/<id>"; a static object is never the actor and has no part
  (PART_UNKNOWN); a contact between a planned pair of the accident template is scripted.
- The instructor's fault id of an agent (TrafficAgent.fault_id) is remembered after the fault
  ended (bounded), and an event names the actor's, else the victim's.

Agent columns: ``id`` (TrafficAgent.id), ``x``, ``y`` [m], ``yaw`` [rad] (map), ``speed``,
``lateral_speed`` [m/s] (body frame: a crashed agent slides), ``yaw_rate`` [rad/s], ``length``,
``width`` [m], ``fault_id``.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from vehicle_sim.core.accident.detect import (
    PART_UNKNOWN,
    AccidentDetector,
    Contact,
    static_body,
)
from vehicle_sim.core.accident.detect_arrays import Bodies
from vehicle_sim.core.accident.params import AccidentParams
from vehicle_sim.core.accident.scene import planned_pairs, scripted_names
from vehicle_sim.core.accident.template import load_template
from vehicle_sim.core.traffic.mapfile import load_map
from vehicle_sim.paths import config_path

STATIC = "static/"
EGO_ID = -1  # the ego's body id (agent ids are >= 0)
MAX_FAULTED_AGENTS = 10_000  # agents whose instructor fault id is remembered
COLUMNS = ("id", "x", "y", "yaw", "speed", "lateral_speed", "yaw_rate", "length", "width",
           "fault_id")


def agent_name(agent_id: int) -> str:
    return f"agent/{agent_id}"


@dataclass(frozen=True)
class Event:
    """One accident as reported: the contact (a static object turned victim), its instructor
    fault id (0: none) and whether the accident template planned it."""

    contact: Contact
    fault_id: int
    scripted: bool


def moved(cols: dict[str, np.ndarray], dt_s: np.ndarray) -> tuple[np.ndarray, ...]:
    """x, y, yaw, vx, vy (map frame) of each agent moved dt_s [s] at its body-frame velocity
    and yaw rate, both held constant (the velocity of mid-step heading over the step)."""
    yaw, u, v, r = cols["yaw"], cols["speed"], cols["lateral_speed"], cols["yaw_rate"]

    def velocity(h: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        c, s = np.cos(h), np.sin(h)
        return c * u - s * v, s * u + c * v
    vx, vy = velocity(yaw + 0.5 * r * dt_s)
    yaw_end = yaw + r * dt_s
    return (cols["x"] + vx * dt_s, cols["y"] + vy * dt_s, yaw_end, *velocity(yaw_end))


class AccidentWatch:
    """Accidents of the ego and the agents (module docstring)."""

    def __init__(self, p: AccidentParams, ego_size_m: tuple[float, float]):
        self.p, self.ego_size_m = p, ego_size_m
        self.with_ego = AccidentDetector(p.release_s, p.part_margin_m)
        self.between_agents = AccidentDetector(p.release_s, p.part_margin_m)
        self.statics = ([static_body(o) for o in load_map(config_path(p.map_file))
                         .static_objects] if p.map_file else [])
        template = load_template(config_path(p.accident_template)) \
            if p.accident_template else None
        self.names = scripted_names(template) if template else {}
        self.planned = planned_pairs(template) if template else set()
        self.fault_of: dict[str, int] = {}  # agent name -> last instructor fault id on it
        self._last_ns: dict[int, int] = {}  # detector -> its last sample time
        self._faults_ns = -1  # stamp of the last agent array whose faults were remembered

    def name_of(self, body_id: int) -> str:
        if body_id == EGO_ID:
            return self.p.ego_name
        return self.names.get(body_id) or agent_name(body_id)

    def remember_faults(self, t_ns: int, cols: dict[str, np.ndarray]) -> None:
        """The instructor's fault ids of an agent array's agents (stamped ``t_ns``), kept after
        the faults end; a new run (sim time went back) starts with none of the run before."""
        if t_ns < self._faults_ns:
            self.fault_of.clear()
        self._faults_ns = t_ns
        faulted = cols["fault_id"] != 0
        for agent_id, fault in zip(cols["id"][faulted].tolist(),
                                   cols["fault_id"][faulted].tolist(), strict=True):
            name = self.name_of(agent_id)
            if name not in self.fault_of and len(self.fault_of) >= MAX_FAULTED_AGENTS:
                self.fault_of.pop(next(iter(self.fault_of)))  # bounded: forget the oldest
            self.fault_of[name] = fault

    def agents(self, t_ns: int, current: list[tuple[int, dict]]) -> list[Event]:
        """An agent array stamped t_ns came: the contacts between the ``current`` agents
        (stamp_ns, columns) at t_ns (agents_vs_agents; those of that array are not moved)."""
        if not self.p.agents_vs_agents:
            return []
        return self._detect(self.between_agents, t_ns, self._bodies(t_ns, [], current), None)

    def ego(self, t_ns: int, ego: tuple[float, ...],
            current: list[tuple[int, dict]]) -> list[Event]:
        """The ego state stamped t_ns against the ``current`` agent arrays (stamp_ns, columns),
        each moved to t_ns. ``ego``: x, y [m], yaw [rad] (map), u, v [m/s] (body frame),
        yaw rate [rad/s]."""
        x, y, yaw, u, v, r = ego
        c, s = np.cos(yaw), np.sin(yaw)
        first = [([EGO_ID], [x], [y], [yaw], [self.ego_size_m[0]], [self.ego_size_m[1]],
                  [c * u - s * v], [s * u + c * v], [r])]
        return self._detect(self.with_ego, t_ns, self._bodies(t_ns, first, current),
                            self.p.ego_name)

    def _bodies(self, t_ns: int, first: list[tuple], current: list[tuple[int, dict]]
                ) -> Bodies:
        """``first`` (rows as columns) then every current agent moved to t_ns (at most
        max_extrapolation_s)."""
        parts = list(first)
        for stamp_ns, cols in current:
            dt = min(max((t_ns - stamp_ns) * 1e-9, 0.0), self.p.max_extrapolation_s)
            ax, ay, ayaw, avx, avy = moved(cols, np.full(len(cols["id"]), dt))
            parts.append((cols["id"], ax, ay, ayaw, cols["length"], cols["width"], avx, avy,
                          cols["yaw_rate"]))
        if not parts:
            return Bodies.from_columns([], self.name_of, *([[]] * 8))
        ids, *rest = (np.concatenate([np.asarray(p[k], dtype=float if k else np.int64)
                                      for p in parts]) for k in range(9))
        return Bodies.from_columns(ids, self.name_of, *rest)

    def _detect(self, detector: AccidentDetector, t_ns: int, bodies: Bodies,
                only_with: str | None) -> list[Event]:
        """New contacts; ValueError (one line naming the body) for a non-finite or empty one."""
        if t_ns < self._last_ns.get(id(detector), -1):  # a new run: episodes start over
            detector.reset()
        self._last_ns[id(detector)] = t_ns
        return [self._event(c) for c in detector.update_arrays(t_ns, bodies, only_with,
                                                               self.statics)]

    def _event(self, c: Contact) -> Event:
        fault = self.fault_of.get(c.actor) or self.fault_of.get(c.victim, 0)
        scripted = frozenset((c.actor, c.victim)) in self.planned
        if c.actor.startswith(STATIC):  # the vehicle may spin away at the contact point
            c = replace(c, actor=c.victim, victim=c.actor, actor_part=c.victim_part,
                        victim_part=c.actor_part, relative_velocity_mps=tuple(
                            -v for v in c.relative_velocity_mps))
        if c.victim.startswith(STATIC):
            c = replace(c, victim_part=PART_UNKNOWN)
        return Event(c, fault, scripted)
