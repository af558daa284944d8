"""Planar rigid bodies in collision (paper 004 sec. 7): the crash world the traffic calls.

Bodies (one row each in ``BodyArrays``): x, y [m], yaw [rad], vx, vy [m/s] (map frame), yaw rate
[rad/s]; mass [kg], yaw inertia [kg m^2], box length x width [m], crash class (crash_params).
Three kinds: DYNAMIC (traffic agents, scripted vehicles: integrated here once in contact or
crashed), PRESCRIBED (the ego as the traffic sees it, and a scripted vehicle whose event chain
goes on: moves at its given velocity, forces on it are not integrated; the ego's own crash
forces act inside its physics, see ego_contacts; two prescribed bodies do not meet, nor does a
prescribed body meet a static object) and the map's static objects (ContactGeometry, added
once).

``step`` (004 sec. 7.2, sub-models only for pairs in contact): the numba broad phase over all
bodies (broad_phase), pybullet's narrow phase (contact_geometry) and the crash model
(crash_model) only for the candidate pairs, sub-stepped by ``CrashParams.substep_s`` inside dt
for the bodies of those pairs (symplectic Euler; while no candidate pair touches, the gap is
jumped over in as many sub-steps at once as the closing speed allows).

After an impact a body is crashed: its references are off and it moves by pure planar dynamics
until it stops (004). Our law (a choice, the reconstruction practice of a post-impact skid with
locked wheels, e.g. Brach & Brach, Vehicle Accident Analysis and Reconstruction Methods, ch. 3):
the CG decelerates at mu g against its velocity, the yaw rate at mu g m rho / I_z (Coulomb
friction of a uniform footprint spinning about its CG, rho = the mean distance of the footprint's
points from the CG); translation and rotation are treated as decoupled (the coupled limit
surface would stop a spinning slide somewhat later).
"""
from __future__ import annotations

import numpy as np

from vehicle_sim.core.accident import broad_phase
from vehicle_sim.core.accident.contact_geometry import ContactGeometry
from vehicle_sim.core.accident.crash_bodies import (
    DYNAMIC,
    BodyArrays,
    CrashStep,
    mean_footprint_radius_m,
    slide,
)
from vehicle_sim.core.accident.crash_params import CrashParams
from vehicle_sim.core.accident.crash_substeps import Substepper
from vehicle_sim.core.box_geometry import bounding_radii
from vehicle_sim.core.units import GRAVITY_MPS2


class CrashWorld:
    """The crash world of a map (see the module docstring)."""

    def __init__(self, statics=(), params: CrashParams | None = None):
        self.params = params = params or CrashParams()
        self.geometry = ContactGeometry(statics, params.vehicle_height_m, params.static_height_m)
        self._grid = broad_phase.build_static_grid(
            np.array([s.box_m for s in self.geometry.statics]))
        self.crashed: set[int] = set()
        self._springs: dict[tuple[int, int, int], np.ndarray] = {}  # pair -> its contact state
        self.last_touch_ns: dict[tuple[int, int, int], int] = {}  # episodes (release_s)

    def close(self) -> None:
        """Release the contact geometry's pybullet client (unusable afterwards)."""
        self.geometry.close()

    def reset(self) -> None:
        """Forget every crash and contact (sim/reset)."""
        self.crashed.clear()
        self._springs.clear()
        self.last_touch_ns.clear()

    def release(self, body_id: int) -> None:
        """Body ``body_id`` is no longer crashed (removed by the traffic or timed out)."""
        self.crashed.discard(int(body_id))

    def candidates(self, b: BodyArrays, dt_s: float) -> tuple[np.ndarray, np.ndarray]:
        """(vehicle pairs (k, 2) row indices, static pairs (k, 2) (row, static index)) that may
        touch within dt_s; pairs of two prescribed bodies are dropped."""
        reach = np.hypot(b.vel[:, 0], b.vel[:, 1]) * dt_s + 0.02
        vv = broad_phase.vehicle_candidates(b.pose, b.size, reach)
        if len(vv):
            vv = vv[(b.mode[vv[:, 0]] == DYNAMIC) | (b.mode[vv[:, 1]] == DYNAMIC)]
        dyn = np.flatnonzero(b.mode == DYNAMIC)
        radius = bounding_radii(b.size[dyn, 0], b.size[dyn, 1]) + reach[dyn]
        vs = broad_phase.static_candidates(self._grid, b.pose[dyn, 0].copy(),
                                           b.pose[dyn, 1].copy(), radius)
        if len(vs):
            vs = np.column_stack((dyn[vs[:, 0]], vs[:, 1]))
        return vv, vs

    def step(self, t_ns: int, dt_s: float, bodies: BodyArrays) -> CrashStep:
        """Advance contacts and crashed bodies by dt_s [s] (see the module docstring)."""
        if not 0.0 < dt_s <= 1.0:
            raise ValueError(f"dt_s must be in (0, 1] s, got {dt_s}")
        bodies.check()
        release = round(self.params.release_s * 1e9)
        self.last_touch_ns = {k: t for k, t in self.last_touch_ns.items() if t_ns - t < release}
        vv, vs = self.candidates(bodies, dt_s)
        vv, vs, resting = self._drop_resting(bodies, vv, vs, t_ns)
        sub = Substepper(self, bodies, vv, vs)
        sub.run(dt_s)
        kept = resting | set(sub.keys)  # a pair no longer near (a body moved or left)
        self._springs = {k: v for k, v in self._springs.items() if k in kept}  # starts afresh
        crashed = np.isin(bodies.ids, np.fromiter(self.crashed, np.int64, len(self.crashed)))
        rows = set(sub.touched_rows) | set(np.flatnonzero(crashed).tolist())
        rows = sorted(r for r in rows if bodies.mode[r] == DYNAMIC)  # not the prescribed
        rows = np.array(rows, dtype=np.int64)
        pose, vel = bodies.pose.copy(), bodies.vel.copy()
        if len(sub.rows):
            pose[sub.rows], vel[sub.rows] = sub.pose, sub.vel
        lone = rows[~np.isin(rows, sub.rows)]
        if len(lone):  # crashed, not near anything: pure sliding over the whole step
            self._slide(bodies, lone, pose, vel, dt_s)
        for r in sub.touched_rows:
            if bodies.mode[r] == DYNAMIC:
                self.crashed.add(int(bodies.ids[r]))
        states = np.column_stack((pose[rows], vel[rows])) if len(rows) else np.zeros((0, 6))
        contacts = sub.reports(set(self.last_touch_ns))
        self.last_touch_ns.update({sub.keys[n]: int(t_ns) for n, g in enumerate(sub.last)
                                   if g is not None})
        return CrashStep(ids=bodies.ids[rows].astype(np.int64), states=states, contacts=contacts)

    def _drop_resting(self, b: BodyArrays, vv: np.ndarray, vs: np.ndarray, t_ns: int
                      ) -> tuple[np.ndarray, np.ndarray, set[tuple[int, int, int]]]:
        """Pairs still in contact whose bodies are all at rest leave the sub-steps: nothing moves,
        the deformation stays as it is (the plastic set); their episode stays open. Returns the
        remaining pairs and the keys of those left out (their contact state is kept)."""
        stop = self.params.stop_speed_mps
        resting: set[tuple[int, int, int]] = set()
        still = (np.hypot(b.vel[:, 0], b.vel[:, 1]) +
                 np.abs(b.vel[:, 2]) * bounding_radii(b.size[:, 0], b.size[:, 1])) < stop
        ids = b.ids

        def keep(i, j, static):
            key = (int(ids[i]), -1 if static >= 0 else int(ids[j]), static)
            if key in self._springs and still[i] and (static >= 0 or still[j]):
                self.last_touch_ns[key] = int(t_ns)
                resting.add(key)
                return False
            return True

        if len(vv):
            vv = vv[[keep(i, j, -1) for i, j in vv]].reshape(-1, 2)
        if len(vs):
            vs = vs[[keep(i, 0, int(k)) for i, k in vs]].reshape(-1, 2)
        return vv, vs, resting

    def _slide(self, b: BodyArrays, rows: np.ndarray, pose: np.ndarray, vel: np.ndarray,
               h: float) -> None:
        v = vel[rows]
        rho = mean_footprint_radius_m(b.size[rows, 0], b.size[rows, 1])
        slide(v, self.params.road_friction * GRAVITY_MPS2, rho, b.mass_kg[rows],
              b.yaw_inertia_kgm2[rows], h)
        stop = self.params.stop_speed_mps
        still = (np.hypot(v[:, 0], v[:, 1]) < stop) & (np.abs(v[:, 2]) < stop)
        v[still] = 0.0
        vel[rows] = v
        pose[rows] += v * h
