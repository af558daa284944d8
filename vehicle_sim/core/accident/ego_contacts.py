"""The ego's crash forces, computed every physics step (1 kHz) inside its integration.

The ego is the body A of every pair; B is a static object of the map (ContactGeometry) or a
traffic agent taken as a prescribed body: at its latest published state moved at constant
velocity to the step's time (at most ``max_extrapolation_s``). Broad phase: the static grid of
broad_phase and one vectorised circle test over the agents' arrays; pybullet's narrow phase and
004's crash model (crash_model) only for the candidates, so the step costs a few microseconds
when nothing is near. The force on the ego goes to the model's ``set_external_wrench`` (odom
force at a point), held over the next step; the model's own integrator moves the ego.

Agents are immovable for this computation (their own crash response is the crash world's, in
the traffic node); the pair's stiffness is still the two sides in series.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from vehicle_sim.core.accident import broad_phase, detect
from vehicle_sim.core.accident import crash_model as cm
from vehicle_sim.core.accident.clear_margin import CLEAR_MARGIN_M, RETRY_NS, ClearMargin
from vehicle_sim.core.accident.contact_geometry import ContactGeometry
from vehicle_sim.core.accident.crash_bodies import NO_STATIC, ContactReport
from vehicle_sim.core.accident.crash_params import CrashParams, crash_class_index
from vehicle_sim.core.box_geometry import bounding_radius
from vehicle_sim.core.vehicle.full14.state_layout import X_R, X_VX, X_VY, X_X, X_Y, X_YAW, X_Z

EGO_ID = -2  # a_id of the ego in the ContactReports (agent ids are >= 0)


# a choice: 0.5 s (agent_timeout_s) at 10 m/s^2 moves the ego 1.25 m farther than its speed
# says; 5 m covers that with room
HAND_OVER_MARGIN_M = 5.0


@dataclass(frozen=True)
class EgoBody:
    """The ego's box [m], mass [kg], yaw inertia [kg m^2] and crash class index."""

    length_m: float
    width_m: float
    mass_kg: float
    yaw_inertia_kgm2: float
    crash_class: int

    @classmethod
    def from_vehicle(cls, params) -> EgoBody:
        """From a VehicleParams (chassis box, mass, inertia, crash_class)."""
        c = params.chassis
        return cls(c.length_m, c.width_m, c.mass_kg, c.yaw_inertia_kgm2,
                   crash_class_index(params.crash_class))


@dataclass(frozen=True)
class AgentArrays:
    """Traffic agents, one row each: ids (n,), stamp_ns (n,) of their state, pose (n, 3) x y yaw
    [m, rad], vel (n, 3) vx vy [m/s] (map) and yaw rate [rad/s], size (n, 2) length width [m],
    crash_class (n,) indices."""

    ids: np.ndarray
    stamp_ns: np.ndarray
    pose: np.ndarray
    vel: np.ndarray
    size: np.ndarray
    crash_class: np.ndarray

    @classmethod
    def from_columns(cls, ids, stamp_ns, x, y, yaw, speed, lateral_speed, yaw_rate, length,
                     width, crash_class) -> AgentArrays:
        """From per-agent columns (map frame; speed and lateral speed [m/s] in the agent's body
        frame, as TrafficAgent carries them); rows with a non-finite pose or velocity or an
        empty box are left out."""
        yaw = np.asarray(yaw, float)
        c, s = np.cos(yaw), np.sin(yaw)
        u, v = np.asarray(speed, float), np.asarray(lateral_speed, float)
        out = cls(np.asarray(ids, np.int64), np.asarray(stamp_ns, np.int64),
                  np.column_stack([x, y, yaw]).astype(float),
                  np.column_stack([c * u - s * v, s * u + c * v, yaw_rate]).astype(float),
                  np.column_stack([length, width]).astype(float),
                  np.asarray(crash_class, np.int64))
        ok = np.isfinite(out.pose).all(axis=1) & np.isfinite(out.vel).all(axis=1) & \
            (out.size > 0).all(axis=1)
        if ok.all():
            return out
        return cls(out.ids[ok], out.stamp_ns[ok], out.pose[ok], out.vel[ok], out.size[ok],
                   out.crash_class[ok])

    def near(self, x_m: float, y_m: float, speed_mps: float, ego_radius_m: float,
             horizon_s: float) -> AgentArrays:
        """The rows that can touch an ego at (x, y) [m] going ``speed_mps`` (bounding circle
        ``ego_radius_m``) within ``horizon_s`` of their stamp: each at its own speed, the ego at
        its, both on straight lines, plus HAND_OVER_MARGIN_M (the ego's acceleration meanwhile).
        What the physics gets of a large traffic (3,000 agents are ~264 kB a set: more than the
        physics process's request pipe holds; a few dozen are ever this near)."""
        reach = (speed_mps + np.hypot(self.vel[:, 0], self.vel[:, 1])) * horizon_s + \
            ego_radius_m + 0.5 * np.hypot(self.size[:, 0], self.size[:, 1]) + HAND_OVER_MARGIN_M
        ok = np.hypot(self.pose[:, 0] - x_m, self.pose[:, 1] - y_m) <= reach
        if ok.all():
            return self
        return AgentArrays(self.ids[ok], self.stamp_ns[ok], self.pose[ok], self.vel[ok],
                           self.size[ok], self.crash_class[ok])

    @classmethod
    def empty(cls) -> AgentArrays:
        z = np.zeros(0)
        return cls(z.astype(np.int64), z.astype(np.int64), np.zeros((0, 3)), np.zeros((0, 3)),
                   np.zeros((0, 2)), z.astype(np.int64))


@dataclass(frozen=True)
class EgoWrench:
    """Force [N] (odom, z = 0) to apply at point [m] (odom; the CG when there is no contact)
    over the next step, and the contacts of this step (ego = a_id EGO_ID)."""

    force_n: np.ndarray
    point_m: np.ndarray
    contacts: list[ContactReport]


class EgoContacts:
    """Contact wrench on the ego against the map's statics and the traffic agents."""

    def __init__(self, statics, ego: EgoBody, params: CrashParams | None = None,
                 max_extrapolation_s: float = 0.2):
        self.params = params = params or CrashParams()
        self.ego = ego
        self.geometry = ContactGeometry(statics, params.vehicle_height_m, params.static_height_m)
        self._grid = broad_phase.build_static_grid(
            np.array([s.box_m for s in self.geometry.statics]))
        self._max_extra_ns = round(max_extrapolation_s * 1e9)
        self._springs: dict[tuple[int, int], np.ndarray] = {}  # (agent id, static) -> state
        self._last_touch_ns: dict[tuple[int, int], int] = {}  # episodes (CrashParams.release_s)
        self._radius = bounding_radius(ego.length_m, ego.width_m)
        self._clear: ClearMargin | None = None  # the last step that found nothing near
        self._retry_ns = 0  # no new margin look before this time

    def reset(self) -> None:
        """Forget the contacts (sim/reset)."""
        self._springs.clear()
        self._last_touch_ns.clear()
        self._clear, self._retry_ns = None, 0

    def wrench(self, t_ns: int, snapshot, dt_s: float, agents: AgentArrays | None = None
               ) -> EgoWrench:
        """The ego's crash wrench at t_ns [ns] for a step of dt_s [s]; snapshot: the model's
        VehicleSnapshot (CG position and yaw in odom, velocities in base_link).

        The contact impulse over the step is computed on the ego as a free planar rigid body
        sub-stepped at ``CrashParams.substep_s`` (the tyre forces are small next to the crash
        forces over one step), and returned as the constant force and moment that give the same
        change of momentum: the model's explicit step then cannot overshoot the stiff contact
        (a force sampled once per 1 ms step would, K = 81.7 R_o is ~3e8 N/m at a front)."""
        return self.wrench_at(t_ns, tuple(snapshot.position_m), float(snapshot.rpy_rad[2]),
                              (float(snapshot.velocity_mps[0]), float(snapshot.velocity_mps[1]),
                               float(snapshot.angular_velocity_radps[2])), dt_s, agents)

    def wrench_at(self, t_ns: int, position_m, yaw_rad: float, body_velocity, dt_s: float,
                  agents: AgentArrays | None = None) -> EgoWrench:
        """``wrench`` from the CG position (x, y, z) [m] (odom), yaw [rad] and the base_link
        velocity (u, v [m/s], yaw rate [rad/s]) (a model's state, no snapshot needed)."""
        x, y, z = (float(q) for q in position_m)
        yaw = float(yaw_rad)
        c, s = math.cos(yaw), math.sin(yaw)
        u, v, r = (float(q) for q in body_velocity)
        vx, vy = c * u - s * v, s * u + c * v
        reach = math.hypot(vx, vy) * dt_s + 0.05
        if self._last_touch_ns:  # episodes end release_s after their last touch
            release = round(self.params.release_s * 1e9)
            self._last_touch_ns = {k: t for k, t in self._last_touch_ns.items()
                                   if t_ns - t < release}
        if self._clear is not None and self._clear.holds(t_ns, x, y, reach, agents):
            return EgoWrench(np.zeros(3), np.array([x, y, z]), [])  # what the full test gives
        body = detect.Body("ego", x, y, yaw, self.ego.length_m, self.ego.width_m, vx, vy, r)
        near = self._near(t_ns, body, reach, dt_s, agents)
        before = set(self._last_touch_ns)
        if not near:
            self._springs.clear()
            self._look_wider(t_ns, body, reach, agents)
            return EgoWrench(np.zeros(3), np.array([x, y, z]), [])
        self._clear = None
        pos, vel = np.array([x, y, yaw]), np.array([vx, vy, r])
        n_sub = max(1, math.ceil(dt_s / self.params.substep_s - 1e-9))
        h = dt_s / n_sub
        impulse = {key: np.zeros(2) for key, _ in near}
        impact = dict.fromkeys(impulse, 0.0)
        last: dict = {}
        for i in range(n_sub):
            ego = self._body(pos, vel)
            acc = np.zeros(3)
            touching = set()
            for key, other in near:
                b = None if other is None else _moved(other[0], i * h)
                g = (self.geometry.vehicle_pair(ego, b) if b is not None
                     else self.geometry.vehicle_static(ego, key[1]))
                if g is None or g.distance_m > 0.0:
                    continue
                f_b, closing = self._pair_force(key, ego, (b, 0 if other is None else other[1]),
                                                g, h)
                if closing > self.params.stop_speed_mps:
                    impact[key] += float(np.hypot(*f_b)) * h
                lever = g.point_m - pos[:2]
                acc[:2] -= f_b
                acc[2] -= lever[0] * f_b[1] - lever[1] * f_b[0]
                impulse[key] += f_b * h
                last[key] = (g, ego, b)
                touching.add(key)
            vel += acc * h / np.array([self.ego.mass_kg, self.ego.mass_kg,
                                       self.ego.yaw_inertia_kgm2])
            pos += vel * h
        self._springs = {k: v for k, v in self._springs.items() if k in touching}
        self._last_touch_ns.update({k: t_ns for k in last})
        dv = vel - np.array([c * u - s * v, s * u + c * v, r])
        force = self.ego.mass_kg * dv[:2] / dt_s
        moment = self.ego.yaw_inertia_kgm2 * dv[2] / dt_s
        contacts = [self._report(k, *last[k], (float(np.hypot(*impulse[k])), impact[k]),
                                 k not in before) for k, _ in near if k in last]
        return EgoWrench(np.array([force[0], force[1], 0.0]),
                         self._equivalent_point(x, y, z, force, moment), contacts)

    def _body(self, pos: np.ndarray, vel: np.ndarray) -> detect.Body:
        return detect.Body("ego", float(pos[0]), float(pos[1]), float(pos[2]),
                           self.ego.length_m, self.ego.width_m, float(vel[0]), float(vel[1]),
                           float(vel[2]))

    def _look_wider(self, t_ns: int, ego: detect.Body, reach: float,
                    agents: AgentArrays | None) -> None:
        """After a step with nothing near: the broad phase CLEAR_MARGIN_M wider; finding nothing
        there either lets the next steps skip theirs while it holds (core.accident.clear_margin)."""
        self._clear = None
        if t_ns < self._retry_ns:
            return
        wide = reach + CLEAR_MARGIN_M
        has_agents = agents is not None and len(agents.ids) > 0
        if len(self._static_hits(ego, wide)) or (
                has_agents and len(self._agent_hits(ego, wide, agents, t_ns))):
            self._retry_ns = t_ns + RETRY_NS
            return
        speed = float(np.hypot(agents.vel[:, 0], agents.vel[:, 1]).max()) if has_agents else 0.0
        self._clear = ClearMargin(ego.x_m, ego.y_m, t_ns, wide, agents, speed)

    def _near(self, t_ns: int, ego: detect.Body, reach: float, dt_s: float,
              agents: AgentArrays | None):
        """[(key, None or (agent body at t_ns, crash class))] within ``reach`` [m] of the ego
        this step: broad phase, then one narrow-phase distance query with that reach."""
        cands = [((-1, int(k)), None) for k in self._static_hits(ego, reach)]
        if agents is not None and len(agents.ids):
            for row in self._agent_hits(ego, reach, agents, t_ns):
                b = self._agent_body(agents, int(row), t_ns)
                cands.append(((int(agents.ids[row]), NO_STATIC),
                              (b, int(agents.crash_class[row]))))
        near = []
        for key, other in cands:
            r = reach if other is None else reach + math.hypot(other[0].vx_mps,
                                                               other[0].vy_mps) * dt_s
            g = (self.geometry.vehicle_static(ego, key[1], r) if other is None
                 else self.geometry.vehicle_pair(ego, other[0], r))
            if g is not None:
                near.append((key, other))
        return near

    def _static_hits(self, ego: detect.Body, reach: float) -> np.ndarray:
        hits = broad_phase.static_candidates(self._grid, np.array([ego.x_m]),
                                             np.array([ego.y_m]),
                                             np.array([self._radius + reach]))
        return hits[:, 1]

    def _agent_hits(self, ego, reach, agents: AgentArrays, t_ns: int) -> np.ndarray:
        """Rows of the agents whose bounding circle, moved to t_ns (at most the extrapolation
        bound), is within ``reach`` of the ego's."""
        return broad_phase.agents_near(agents.pose, agents.vel, agents.size, agents.stamp_ns,
                                       t_ns, self._max_extra_ns, ego.x_m, ego.y_m,
                                       self._radius, reach)

    def _agent_body(self, a: AgentArrays, row: int, t_ns: int) -> detect.Body:
        age = min(max(t_ns - int(a.stamp_ns[row]), 0), self._max_extra_ns) * 1e-9
        p, v = a.pose[row], a.vel[row]
        return detect.Body(str(int(a.ids[row])), float(p[0] + v[0] * age),
                           float(p[1] + v[1] * age), float(p[2] + v[2] * age),
                           float(a.size[row, 0]), float(a.size[row, 1]), float(v[0]),
                           float(v[1]), float(v[2]))

    def _pair_force(self, key, ego, other_and_class, g, h: float) -> tuple[np.ndarray, float]:
        """(force on B [N], closing speed [m/s]) of one pair this sub-step."""
        other, cls = other_and_class
        point = g.point_m
        v_rel = detect.point_velocity(ego, point)
        if other is not None:
            v_rel = v_rel - detect.point_velocity(other, point)
        e = self.ego
        side = cm.side_coefficients(
            e.crash_class, cm.part_column(e.length_m, e.width_m, ego.yaw_rad,
                                          (ego.x_m, ego.y_m), point))
        other_side, mu = None, self.params.barrier_friction
        if other is not None:
            other_side = cm.side_coefficients(cls, cm.part_column(
                other.length_m, other.width_m, other.yaw_rad, (other.x_m, other.y_m), point))
            mu = math.inf
        k, r = cm.in_series(side, other_side)
        lever = point - np.array([ego.x_m, ego.y_m])
        inv = ((1.0 / e.mass_kg, 0.0), (1.0 / e.yaw_inertia_kgm2, 0.0), (lever, np.zeros(2)))
        tangent = np.array([-g.normal[1], g.normal[0]])
        m_eff = min(cm.effective_mass(*inv, g.normal), cm.effective_mass(*inv, tangent))
        f_b, self._springs[key], _ = cm.contact_force(cm.PairLaw(k, r, mu), g.depth_m, g.normal,
                                                      v_rel, self._springs.get(key), m_eff, h)
        return f_b, float(v_rel @ g.normal)

    def _report(self, key, g, ego, other, impulses, first: bool) -> ContactReport:
        margin = self.params.part_margin_m
        return ContactReport(
            a_id=EGO_ID, b_id=key[0], b_static=key[1], first=first,
            point_m=(float(g.point_m[0]), float(g.point_m[1])),
            normal=(float(g.normal[0]), float(g.normal[1])), impulse_ns=impulses[0],
            impact_impulse_ns=impulses[1],
            a_part=detect.impact_part(ego, g.point_m, margin, np.asarray(g.normal)),
            b_part=detect.PART_UNKNOWN if other is None else
            detect.impact_part(other, g.point_m, margin, -np.asarray(g.normal)))

    @staticmethod
    def _equivalent_point(x, y, z, force, moment) -> np.ndarray:
        """A point whose lever arm gives ``moment`` [N m] about the CG for ``force``."""
        f2 = float(force @ force)
        if f2 < 1e-9:
            return np.array([x, y, z])
        k = moment / f2
        return np.array([x + k * force[1], y - k * force[0], z])


def _moved(b: detect.Body, dt_s: float) -> detect.Body:
    """``b`` moved at constant velocity by dt_s [s] (a prescribed agent)."""
    return detect.Body(b.name, b.x_m + b.vx_mps * dt_s, b.y_m + b.vy_mps * dt_s,
                       b.yaw_rad + b.yaw_rate_radps * dt_s, b.length_m, b.width_m, b.vx_mps,
                       b.vy_mps, b.yaw_rate_radps)


def planar_motion(model) -> tuple[tuple[float, float, float], float, tuple[float, float, float]]:
    """((x, y, z) [m] odom, yaw [rad], (u, v [m/s], yaw rate [rad/s]) base_link) of the CG from
    the model's state (a snapshot costs ~0.1-0.4 ms, too much at 1 kHz). The kinematic model:
    the CG speed taken along the body x (its slip angle beta is small) and its yaw rate from the
    snapshot only when moving."""
    x = model.state
    if model.name == "single_track":
        return (x[0], x[1], 0.0), x[2], (x[3], x[4], x[5])
    if model.name == "full14":
        c, s = math.cos(x[X_YAW]), math.sin(x[X_YAW])
        return ((x[X_X], x[X_Y], x[X_Z]), x[X_YAW],
                (c * x[X_VX] + s * x[X_VY], -s * x[X_VX] + c * x[X_VY], x[X_R]))
    r = float(model.snapshot().angular_velocity_radps[2]) if x[3] != 0.0 else 0.0
    return (x[0], x[1], 0.0), x[2], (x[3], 0.0, r)
