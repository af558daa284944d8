"""The ego's crash inside its physics loop (issue 11), free of ROS: the crash wrench of each step
from the map's static objects and the traffic agents (EgoContacts), and the ego's damage.

It runs wherever the physics loop runs (the dynamics node's thread, or the physics process of
core.loop_process); what a node must publish or log leaves through two callbacks:
``on_damage(t_ns, impulse_ns, levels)`` and ``on_contact(line)``. Agents are handed over by
``set_agents`` from any thread (a lock; the physics reads them in ``before_step``).
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from vehicle_sim.core.accident import damage as dmg
from vehicle_sim.core.accident import detect
from vehicle_sim.core.accident.ego_contacts import AgentArrays, EgoBody, EgoContacts, planar_motion
from vehicle_sim.core.traffic.mapfile import load_map
from vehicle_sim.paths import config_path


@dataclass(frozen=True)
class EgoCrashSetup:
    """What builds an EgoCrash next to a model (picklable: the physics process gets it)."""

    statics: tuple  # the map's static objects (core.traffic.mapfile)
    body: EgoBody
    dt_s: float
    name: str = "ego"


def far_agent() -> AgentArrays:
    """One agent a kilometre from anything: runs the agents' broad phase, touches nothing."""
    return AgentArrays(np.array([0]), np.array([0]), np.array([[1e6, 1e6, 0.0]]),
                       np.zeros((1, 3)), np.array([[4.5, 1.8]]), np.array([0]))


def crash_setup(map_file: str, vehicle, dt_s: float) -> EgoCrashSetup:
    """The ego's crash physics for ``map_file``'s static objects (relative to the config
    folder) and the vehicle's box and mass (a missing or bad map raises ConfigError)."""
    return EgoCrashSetup(tuple(load_map(config_path(map_file)).static_objects),
                         EgoBody.from_vehicle(vehicle), dt_s)


class EgoCrash:
    """Crash wrench and damage of the ego (module docstring); call ``before_step`` and
    ``reset_done`` from the physics loop's hooks."""

    def __init__(self, setup: EgoCrashSetup, model,
                 on_damage: Callable[[int, list[float], list[int]], None],
                 on_contact: Callable[[str], None]):
        self.model, self.dt_s, self.name = model, setup.dt_s, setup.name
        self.contacts = EgoContacts(setup.statics, setup.body)
        self.damage = dmg.DamageState(setup.body.mass_kg)
        self._box = (setup.body.length_m, setup.body.width_m)
        self._on_damage, self._on_contact = on_damage, on_contact
        self._lock = threading.Lock()
        self._agents = AgentArrays.empty()
        self._pushing = False  # a wrench is set on the model (cleared once contacts end)
        # compile the numba broad phases now, not in the first real-time step (an agent far
        # away: the agents' phase runs, no contact)
        self.contacts.wrench(0, model.snapshot(), self.dt_s, far_agent())
        self.contacts.reset()

    def set_agents(self, agents: AgentArrays) -> None:
        """The traffic agents the next steps collide with (any thread)."""
        with self._lock:
            self._agents = agents

    def before_step(self, k: int, t_ns: int) -> None:
        """The loop's before_step hook: the ego's crash wrench for this step."""
        with self._lock:
            agents = self._agents
        position, yaw, body_velocity = planar_motion(self.model)
        w = self.contacts.wrench_at(t_ns, position, yaw, body_velocity, self.dt_s, agents)
        if w.contacts or self._pushing:
            self.model.set_external_wrench(w.force_n, w.point_m)
        self._pushing = bool(w.contacts)
        if not w.contacts:
            return
        ego = detect.Body(self.name, float(position[0]), float(position[1]), yaw, *self._box)
        changed = False
        for c in w.contacts:
            part = dmg.damage_part(ego, c.point_m, self.contacts.params.part_margin_m)
            changed |= self.damage.add(part, c.impact_impulse_ns)
            if c.first:
                other = f"agent/{c.b_id}" if c.b_id >= 0 else \
                    f"static/{self.contacts.geometry.statics[c.b_static].name}"
                self._on_contact(
                    f"ego crash into {other} at ({c.point_m[0]:.2f}, {c.point_m[1]:.2f}) m, "
                    f"t={t_ns * 1e-9:.3f} s, ego part {dmg.PART_NAMES[part]}")
        if changed:
            self.report(t_ns)

    def reset_done(self, t_ns: int) -> None:
        """The loop's reset hook: contacts and damage cleared (and reported)."""
        self.contacts.reset()
        self.damage.reset()
        self.model.set_external_wrench()
        self.report(t_ns)

    def report(self, t_ns: int) -> None:
        self._on_damage(t_ns, [float(v) for v in self.damage.impulse_ns],
                        [int(v) for v in self.damage.levels()])
