"""The traffic's crash world: agents, scripted vehicles, the ego and the map's static objects.

Each traffic step, before the agents and the scene move (``TrafficCrashes.step`` from the states
at the start of the step; the crash world advances the bodies it handles over the step, and the
traffic kernel and the scene's servo then skip them):
- the bodies are packed for :class:`~vehicle_sim.core.accident.crash_world.CrashWorld`: the
  owned traffic agents and the scene's vehicles as DYNAMIC bodies (but a scene vehicle whose
  event chain goes on: PRESCRIBED, AccidentScene.prescribed), the ego as PRESCRIBED (its own
  crash forces act inside the dynamics node's physics, ego_contacts; here it only pushes);
- the crash world runs 004's crash model only for pairs in contact, sub-stepped;
- every dynamic body it reports (in contact now, or crashed before) is taken over: a traffic agent
  is marked crashed in the traffic (references off, then pure planar dynamics until it stops;
  published STATE_CRASHED, an obstacle for the others until ``TrafficParams.crash_timeout_s``)
  and its state written back; a scripted vehicle is handed over by the scene.
Agents the traffic removed (timeout, reset) are released from the crash world.
Damage (fleet_damage): per-part damage of the agents and scene vehicles from the step's contacts;
``damage_changed`` holds the ids whose level changed in the last step (the node publishes then).
Masses, yaw inertias and crash classes: the traffic agents' vehicle file
(TrafficParams.vehicle_file); the scene's vehicles their vehicle file's. The
ego's box: the traffic core's (TrafficSim.ego_size_m, from the node's ego_vehicle_file).
"""
from __future__ import annotations

import numpy as np

from vehicle_sim.core.accident.crash_bodies import DYNAMIC, PRESCRIBED, BodyArrays, ContactReport
from vehicle_sim.core.accident.crash_params import (
    CrashParams,
    crash_class_index,
)
from vehicle_sim.core.accident.crash_world import CrashWorld
from vehicle_sim.core.accident.fleet_damage import BodyPose, FleetDamage
from vehicle_sim.core.accident.scene import AccidentScene
from vehicle_sim.core.traffic.sim import TrafficSim

EGO_ID = -2  # the ego's body id (agents' uids are >= 0)
_warm = False  # warm_up done in this process


def ego_at_step_start(ego: tuple[float, float, float, float], t_ns: int, dt_s: float,
                      ego_t_ns: int | None) -> tuple[float, float, float, float]:
    """The ego (x, y, yaw, speed) stamped ``ego_t_ns`` (None: t_ns) at the start of the step
    to t_ns, where the bodies are: moved back along its heading by the time it is past that
    start, at most dt (computed ahead, the traffic node steps with the ego of the start), and
    never forward (a late ego is not extrapolated)."""
    back_s = dt_s if ego_t_ns is None or ego_t_ns >= t_ns else \
        max(ego_t_ns - (t_ns - round(dt_s * 1e9)), 0) * 1e-9
    x, y, yaw, speed = ego
    return x - speed * np.cos(yaw) * back_s, y - speed * np.sin(yaw) * back_s, yaw, speed


class TrafficCrashes:
    """Crash coupling of one traffic node (see the module docstring)."""

    def __init__(self, sim: TrafficSim, scene: AccidentScene | None = None,
                 params: CrashParams | None = None):
        self.sim, self.scene = sim, scene
        self.world = CrashWorld(sim.network.spec.static_objects, params)
        c = sim.vehicle.chassis
        # every agent's crash body: mass [kg], yaw inertia [kg m^2], crash class index
        self.agent_body = (c.mass_kg, c.yaw_inertia_kgm2,
                           crash_class_index(sim.vehicle.crash_class))
        self._ego_size = sim.ego_size_m
        self._known_crashed: set[int] = set()
        self.damage = FleetDamage(self.world.params.part_margin_m)
        self.damage_changed: set[int] = set()
        warm_up(self.world.params)

    def close(self) -> None:
        """Release the crash world's pybullet client (unusable afterwards)."""
        self.world.close()

    def reset(self) -> None:
        self.world.reset()
        self._known_crashed.clear()
        self.damage.reset()
        self.damage_changed = set()

    def step(self, t_ns: int, dt_s: float, ego: tuple[float, float, float, float] | None,
             ego_t_ns: int | None = None) -> list[ContactReport]:
        """The crash world over the traffic step to t_ns; the contacts (ids: uids, EGO_ID).
        ``ego`` (x, y, yaw, speed) is stamped ``ego_t_ns`` (None: t_ns)."""
        if ego is not None:
            ego = ego_at_step_start(ego, t_ns, dt_s, ego_t_ns)
        bodies = self._bodies(ego)
        self.damage_changed = set()
        if len(bodies.ids) == 0:
            return []
        done = self.world.step(t_ns, dt_s, bodies)
        self._take_over(done.ids, done.states)
        self._release_removed()
        if done.contacts:
            self.damage_changed = self.damage.add(done.contacts, _poses(bodies, done, dt_s))
        return done.contacts

    def _bodies(self, ego) -> BodyArrays:
        a = self.sim.agents()
        yaw, u, v = a["yaw"], a["speed"], a["lateral_speed"]
        c, s = np.cos(yaw), np.sin(yaw)
        pose = [np.column_stack((a["x"], a["y"], yaw))]
        vel = [np.column_stack((c * u - s * v, s * u + c * v, a["yaw_rate"]))]
        size = [np.column_stack((a["length"], a["width"]))]
        n = len(a["uid"])
        mass, inertia, klass = self.agent_body
        cols = {"ids": [a["uid"].astype(np.int64)], "mode": [np.full(n, DYNAMIC)],
                "mass": [np.full(n, mass)], "inertia": [np.full(n, inertia)],
                "class": [np.full(n, klass)]}
        if self.scene is not None:
            st, k = self.scene.states(), len(self.scene.names)
            pose.append(st[:, :3])
            vel.append(st[:, 3:])
            size.append(self.scene.sizes())
            cols["ids"].append(self.scene.uids)
            cols["mode"].append(np.where(self.scene.prescribed(), PRESCRIBED, DYNAMIC))
            vps = [self.scene.params_of(i) for i in range(k)]
            cols["mass"].append(np.array([p.chassis.mass_kg for p in vps]))
            cols["inertia"].append(np.array([p.chassis.yaw_inertia_kgm2 for p in vps]))
            cols["class"].append(np.array([crash_class_index(p.crash_class) for p in vps]))
        if ego is not None:
            x, y, yaw_e, speed = ego
            pose.append(np.array([[x, y, yaw_e]]))
            vel.append(np.array([[speed * np.cos(yaw_e), speed * np.sin(yaw_e), 0.0]]))
            size.append(np.array([self._ego_size]))
            for key, val in (("ids", EGO_ID), ("mode", PRESCRIBED), ("mass", mass),
                             ("inertia", inertia), ("class", klass)):
                cols[key].append(np.array([val]))
        return BodyArrays(ids=np.concatenate(cols["ids"]), mode=np.concatenate(cols["mode"]),
                          pose=np.concatenate(pose), vel=np.concatenate(vel),
                          size=np.concatenate(size), mass_kg=np.concatenate(cols["mass"]),
                          yaw_inertia_kgm2=np.concatenate(cols["inertia"]),
                          crash_class=np.concatenate(cols["class"]).astype(np.int64))

    def _take_over(self, ids: np.ndarray, states: np.ndarray) -> None:
        scripted = np.isin(ids, self.scene.uids) if self.scene is not None \
            else np.zeros(len(ids), dtype=bool)
        for uid, row in zip(ids[scripted], states[scripted], strict=True):
            self.scene.take_over(int(uid), row)
        agents, rows = ids[~scripted], states[~scripted]
        if len(agents) == 0:
            return
        new = [int(u) for u in agents if int(u) not in self._known_crashed]
        if new:
            self.sim.mark_crashed(new)
            self._known_crashed.update(new)
        self.sim.set_crashed_states(agents, *rows.T)

    def _release_removed(self) -> None:
        """Forget crashed agents the traffic removed (timeout, teleport, reset)."""
        if not self._known_crashed:
            return
        live = set(self.sim.crashed_states()["uid"].tolist())
        for uid in self._known_crashed - live:
            self.world.release(uid)
        self._known_crashed &= live


def _poses(bodies: BodyArrays, done, dt_s: float) -> dict[int, BodyPose]:
    """BodyPose (post-step pose; box and mass) of the dynamic bodies the step moved and of the
    prescribed scene vehicles (moved at their given velocity over dt_s [s]), whose damage the
    book keeps; not the ego's (its own crash physics has it)."""
    row = {int(i): k for k, i in enumerate(bodies.ids.tolist())}
    posed = {int(uid): st[:3] for uid, st in zip(done.ids.tolist(), done.states, strict=True)}
    for k in np.flatnonzero((bodies.mode == PRESCRIBED) & (bodies.ids != EGO_ID)).tolist():
        (x, y, yaw), (vx, vy, r) = bodies.pose[k], bodies.vel[k]
        posed[int(bodies.ids[k])] = (x + vx * dt_s, y + vy * dt_s, yaw + r * dt_s)
    out = {}
    for uid, (x, y, yaw) in posed.items():
        k = row[uid]
        out[uid] = BodyPose(float(x), float(y), float(yaw), float(bodies.size[k, 0]),
                            float(bodies.size[k, 1]), float(bodies.mass_kg[k]))
    return out


def warm_up(params: CrashParams) -> None:
    """Load the crash world's compiled kernels and pybullet's narrow phase now, on a throwaway
    pair in contact: the first contact would otherwise stall the traffic node for ~1 s of wall
    time (measured 0.84 s on a loaded 2-core machine), so that in real time it falls behind
    sim time and skips steps. Once per process (the code stays loaded)."""
    global _warm
    if _warm:
        return
    _warm = True
    n = 2
    bodies = BodyArrays(ids=np.arange(n, dtype=np.int64), mode=np.full(n, DYNAMIC),
                        pose=np.array([[0.0, 0.0, 0.0], [4.0, 0.0, 0.0]]),
                        vel=np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 0.0]]),
                        size=np.full((n, 2), (4.3, 1.7)), mass_kg=np.full(n, 1200.0),
                        yaw_inertia_kgm2=np.full(n, 1500.0),
                        crash_class=np.zeros(n, dtype=np.int64))
    CrashWorld((), params).step(0, 0.01, bodies)
