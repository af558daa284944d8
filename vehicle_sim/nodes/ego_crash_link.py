"""The dynamics node's crash side (issue 11): the ego's crash wrench inside its physics, from the
map's static objects and the traffic agents (``traffic/agents``), and its damage
(``accidents/damage``, VehicleDamage, latched: a late joiner gets the current state).

Threads: agent arrays arrive on the executor thread and are packed under a lock; the physics
thread reads the packed arrays in ``before_step`` (the loop's hook) and publishes damage.
"""
from __future__ import annotations

import math
import threading

import numpy as np
from rclpy.node import Node

from vehicle_sim.core.accident import damage as dmg
from vehicle_sim.core.accident import detect
from vehicle_sim.core.accident.crash_params import KIND_CRASH_CLASS, crash_class_index
from vehicle_sim.core.accident.ego_contacts import AgentArrays, EgoBody, EgoContacts, planar_motion
from vehicle_sim.core.traffic.mapfile import load_map
from vehicle_sim.msg import TrafficAgentArray, VehicleDamage
from vehicle_sim.nodes import conversions as conv
from vehicle_sim.nodes import qos
from vehicle_sim.nodes.agent_inputs import AgentSnapshots
from vehicle_sim.paths import config_path

_KIND_CLASS = [crash_class_index(c) for c in KIND_CRASH_CLASS]


def agent_arrays(current: list) -> AgentArrays:
    """AgentArrays of AgentSnapshots.current()'s (stamp, TrafficAgent) list (map = odom)."""
    n = len(current)
    out = AgentArrays(np.zeros(n, np.int64), np.zeros(n, np.int64), np.zeros((n, 3)),
                      np.zeros((n, 3)), np.zeros((n, 2)), np.zeros(n, np.int64))
    for i, (stamp_ns, a) in enumerate(current):
        yaw = conv.rpy_from_quaternion(a.pose.orientation)[2]
        out.ids[i], out.stamp_ns[i] = a.id, stamp_ns
        out.pose[i] = (a.pose.position.x, a.pose.position.y, yaw)
        c, s = math.cos(yaw), math.sin(yaw)  # body-frame speed and lateral_speed (sliding)
        out.vel[i] = (c * a.speed - s * a.lateral_speed, s * a.speed + c * a.lateral_speed,
                      a.yaw_rate)
        out.size[i] = (a.length, a.width)
        out.crash_class[i] = _KIND_CLASS[a.kind] if a.kind < len(_KIND_CLASS) else 0
    ok = np.isfinite(out.pose).all(axis=1) & np.isfinite(out.vel).all(axis=1) & \
        (out.size > 0).all(axis=1)
    if not ok.all():
        out = AgentArrays(out.ids[ok], out.stamp_ns[ok], out.pose[ok], out.vel[ok],
                          out.size[ok], out.crash_class[ok])
    return out


class EgoCrashLink:
    """Wires EgoContacts and the ego's DamageState into the dynamics node (module docstring)."""

    def __init__(self, node: Node, model, vehicle, map_file: str, dt_s: float,
                 agent_timeout_s: float, name: str = "ego"):
        spec = load_map(config_path(map_file))
        self.node, self.model, self.dt_s, self.name = node, model, dt_s, name
        self.contacts = EgoContacts(spec.static_objects, EgoBody.from_vehicle(vehicle))
        self.damage = dmg.DamageState(vehicle.chassis.mass_kg)
        self._timeout_ns = round(agent_timeout_s * 1e9)
        self._snapshots = AgentSnapshots()
        self._lock = threading.Lock()
        self._dirty = False
        self._agents = AgentArrays.empty()
        self._box = (vehicle.chassis.length_m, vehicle.chassis.width_m)
        self._pushing = False  # a wrench is set on the model (cleared once contacts end)
        self.pub = node.create_publisher(VehicleDamage, "accidents/damage", qos.LATCHED)
        node.create_subscription(TrafficAgentArray, "traffic/agents", self._on_agents,
                                 qos.AGENTS_IN)
        # compile the numba broad phase now, not in the first real-time step
        self.contacts.wrench(0, model.snapshot(), dt_s, AgentArrays.empty())
        self.contacts.reset()
        self.publish(0)
        node.get_logger().info(f"crash contacts: {len(spec.static_objects)} static objects of "
                               f"{map_file} and the traffic agents")

    def _on_agents(self, msg: TrafficAgentArray) -> None:
        with self._lock:
            self._snapshots.update(msg)
            self._dirty = True

    def _current_agents(self, t_ns: int) -> AgentArrays:
        with self._lock:
            if self._dirty:
                self._agents = agent_arrays(self._snapshots.current(t_ns, self._timeout_ns))
                self._dirty = False
        return self._agents

    def before_step(self, k: int, t_ns: int) -> None:
        """The loop's before_step hook: the ego's crash wrench for this step."""
        position, yaw, body_velocity = planar_motion(self.model)
        w = self.contacts.wrench_at(t_ns, position, yaw, body_velocity, self.dt_s,
                                    self._current_agents(t_ns))
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
                self.node.get_logger().info(
                    f"ego crash into {other} at ({c.point_m[0]:.2f}, {c.point_m[1]:.2f}) m, "
                    f"t={t_ns * 1e-9:.3f} s, ego part {dmg.PART_NAMES[part]}")
        if changed:
            self.publish(t_ns)

    def reset_done(self, t_ns: int) -> None:
        """The loop's reset hook: contacts and damage cleared (and published)."""
        self.contacts.reset()
        self.damage.reset()
        self.model.set_external_wrench()
        self.publish(t_ns)

    def publish(self, t_ns: int) -> None:
        msg = VehicleDamage(body=self.name)
        msg.header.stamp, msg.header.frame_id = conv.stamp(t_ns), "map"
        msg.impulse = [float(v) for v in self.damage.impulse_ns]
        msg.level = [int(v) for v in self.damage.levels()]
        self.pub.publish(msg)
