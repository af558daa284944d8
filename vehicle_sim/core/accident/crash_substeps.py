"""The sub-stepped contact integration of one CrashWorld step (only the bodies of candidate
pairs; see crash_world's module docstring). Symplectic Euler: velocities from the contact forces
and the crashed bodies' sliding friction, then poses from the new velocities."""
from __future__ import annotations

import math

import numpy as np

from vehicle_sim.core.accident import crash_model as cm
from vehicle_sim.core.accident import detect
from vehicle_sim.core.accident.crash_bodies import (
    DYNAMIC,
    NO_STATIC,
    ContactReport,
    mean_footprint_radius_m,
    slide,
)
from vehicle_sim.core.units import GRAVITY_MPS2

MAX_JUMP_SUBSTEPS = 1000  # bound on the sub-steps skipped at once while no pair touches


class Substepper:
    """State of the bodies of the candidate pairs during one step."""

    def __init__(self, world, bodies, vv: np.ndarray, vs: np.ndarray):
        self.world, self.b = world, bodies
        self.rows = np.unique(np.concatenate((vv.ravel(), vs[:, 0]))).astype(np.int64)
        local = {int(r): k for k, r in enumerate(self.rows)}
        self.pose = bodies.pose[self.rows].astype(float)
        self.vel = bodies.vel[self.rows].astype(float)
        dyn = bodies.mode[self.rows] == DYNAMIC
        self.dynamic = dyn
        self.inv_m = np.where(dyn, 1.0 / bodies.mass_kg[self.rows], 0.0)
        self.inv_i = np.where(dyn, 1.0 / bodies.yaw_inertia_kgm2[self.rows], 0.0)
        ids = bodies.ids[self.rows]
        self.crashed = dyn & np.array([int(i) in world.crashed for i in ids], dtype=bool)
        self.pairs = [(local[int(i)], local[int(j)], NO_STATIC) for i, j in vv]
        self.pairs += [(local[int(i)], -1, int(s)) for i, s in vs]
        self.keys = [self._key(p) for p in self.pairs]
        self.stretch = [None if k not in world._springs else world._springs[k].copy()
                        for k in self.keys]  # each pair's state (crash_model.contact_force)
        self.in_contact = [False] * len(self.pairs)
        self.impulse = [np.zeros(2) for _ in self.pairs]
        self.impact = [0.0] * len(self.pairs)
        self.last = [None] * len(self.pairs)  # last ContactGeom while touching
        self.touched_rows: set[int] = set()
        rho = np.hypot(bodies.size[self.rows, 0], bodies.size[self.rows, 1]) * 0.5
        self._reach = rho  # half diagonal: bound of |r| for the closing-speed bound
        self._rho = mean_footprint_radius_m(bodies.size[self.rows, 0], bodies.size[self.rows, 1])

    def _key(self, p) -> tuple[int, int, int]:
        ids = self.b.ids[self.rows]
        return (int(ids[p[0]]), -1 if p[1] < 0 else int(ids[p[1]]), p[2])

    def _body(self, k: int) -> detect.Body:
        r = int(self.rows[k])
        return detect.Body(str(int(self.b.ids[r])), *map(float, self.pose[k]),
                           float(self.b.size[r, 0]), float(self.b.size[r, 1]),
                           *map(float, self.vel[k]))

    def _point_velocity(self, k: int, point: np.ndarray) -> np.ndarray:
        if k < 0:
            return np.zeros(2)
        rx, ry = point[0] - self.pose[k, 0], point[1] - self.pose[k, 1]
        w = self.vel[k, 2]
        return np.array([self.vel[k, 0] - w * ry, self.vel[k, 1] + w * rx])

    def _side(self, k: int, point: np.ndarray) -> tuple[float, float]:
        r = int(self.rows[k])
        col = cm.part_column(self.b.size[r, 0], self.b.size[r, 1], self.pose[k, 2],
                             self.pose[k, :2], point)
        return cm.side_coefficients(int(self.b.crash_class[r]), col)

    def _law(self, a: int, b: int, point: np.ndarray) -> cm.PairLaw:
        k, r = cm.in_series(self._side(a, point), None if b < 0 else self._side(b, point))
        mu = math.inf if b >= 0 else self.world.params.barrier_friction
        return cm.PairLaw(k, r, mu)

    def _geometry(self, p, reach_m: float):
        geo = self.world.geometry
        if p[1] >= 0:
            return geo.vehicle_pair(self._body(p[0]), self._body(p[1]), reach_m)
        return geo.vehicle_static(self._body(p[0]), p[2], reach_m)

    def _closing_bound(self, p) -> float:
        s = 0.0
        for k in (p[0], p[1]):
            if k >= 0:
                s += math.hypot(self.vel[k, 0], self.vel[k, 1]) + abs(self.vel[k, 2]) * \
                    self._reach[k]
        return s

    def run(self, dt_s: float) -> None:
        """Integrate the bodies over dt_s [s] (see the module docstring)."""
        if len(self.rows) == 0:
            return
        h = self.world.params.substep_s
        t = 0.0
        while t < dt_s - 1e-12:
            force = np.zeros((len(self.rows), 3))
            jump, touching = MAX_JUMP_SUBSTEPS, False
            step = min(h, dt_s - t)
            for n, p in enumerate(self.pairs):
                bound = self._closing_bound(p)
                g = self._geometry(p, bound * dt_s + 0.01)
                if g is None or g.distance_m > 0.0:
                    self.in_contact[n] = False
                    gap = bound * dt_s + 0.01 if g is None else g.distance_m
                    jump = min(jump, int(gap / max(bound * h, 1e-9)))
                    continue
                touching = True
                self._apply(n, p, g, step, force)
            if not touching:
                step = min(max(jump, 1) * h, dt_s - t)
            self._integrate(force, step)
            t += step
        for n, key in enumerate(self.keys):
            if self.in_contact[n]:
                self.world._springs[key] = self.stretch[n]
            else:
                self.world._springs.pop(key, None)

    def _apply(self, n: int, p, g, h: float, force: np.ndarray) -> None:
        a, b = p[0], p[1]
        point = g.point_m
        v_rel = self._point_velocity(a, point) - self._point_velocity(b, point)
        levers = (point - self.pose[a, :2], np.zeros(2) if b < 0 else point - self.pose[b, :2])
        inv_m = (self.inv_m[a], 0.0 if b < 0 else self.inv_m[b])
        inv_i = (self.inv_i[a], 0.0 if b < 0 else self.inv_i[b])
        m_eff = cm.effective_mass(inv_m, inv_i, levers, g.normal)
        tangent = np.array([-g.normal[1], g.normal[0]])
        m_eff = min(m_eff, cm.effective_mass(inv_m, inv_i, levers, tangent))
        if not math.isfinite(m_eff):  # two immovable bodies: nothing to integrate
            return
        f_b, self.stretch[n], _ = cm.contact_force(self._law(a, b, point), g.depth_m, g.normal,
                                                   v_rel, self.stretch[n], m_eff, h)
        for k, sign, lever in ((a, -1.0, levers[0]), (b, 1.0, levers[1])):
            if k < 0:
                continue
            force[k, :2] += sign * f_b
            force[k, 2] += sign * (lever[0] * f_b[1] - lever[1] * f_b[0])
            self.touched_rows.add(int(self.rows[k]))
            if self.dynamic[k]:
                self.crashed[k] = True
        self.in_contact[n] = True
        self.impulse[n] += f_b * h
        if float(v_rel @ g.normal) > self.world.params.stop_speed_mps:
            self.impact[n] += float(np.hypot(*f_b)) * h
        self.last[n] = g

    def _integrate(self, force: np.ndarray, h: float) -> None:
        self.vel[:, :2] += force[:, :2] * self.inv_m[:, None] * h
        self.vel[:, 2] += force[:, 2] * self.inv_i * h
        c = self.crashed
        if c.any():
            v = self.vel[c]
            rows = self.rows[c]
            slide(v, self.world.params.road_friction * GRAVITY_MPS2, self._rho[c],
                  self.b.mass_kg[rows], self.b.yaw_inertia_kgm2[rows], h)
            self.vel[c] = v
        self.pose += self.vel * h

    def reports(self, recent: set) -> list:
        """ContactReport of every pair that touched during the step; ``recent``: pair keys whose
        contact episode is still open (not first)."""
        out = []
        margin = self.world.params.part_margin_m
        for n, p in enumerate(self.pairs):
            g = self.last[n]
            if g is None:
                continue
            a_body = self._body(p[0])
            normal = np.asarray(g.normal, dtype=float)  # from A to B
            b_part = detect.PART_UNKNOWN if p[1] < 0 else \
                detect.impact_part(self._body(p[1]), g.point_m, margin, -normal)
            key = self.keys[n]
            out.append(ContactReport(
                a_id=key[0], b_id=key[1], b_static=key[2], first=key not in recent,
                point_m=(float(g.point_m[0]), float(g.point_m[1])),
                normal=(float(g.normal[0]), float(g.normal[1])),
                impulse_ns=float(np.hypot(*self.impulse[n])), impact_impulse_ns=self.impact[n],
                a_part=detect.impact_part(a_body, g.point_m, margin, normal), b_part=b_part))
        return out
