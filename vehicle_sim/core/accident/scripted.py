"""Scripted accident vehicles: paper 002's planned trajectories driven through physics.

Each vehicle of an :class:`~vehicle_sim.core.accident.planners.plan.AccidentPlan` is a planar
single-track model (``core/vehicle/single_track.py``, paper 004's traffic-vehicle equations with
saturating tyres) following its timed trajectory with paper 000's PD servo
(``core/vehicle/servo.py``: Eq. 1 longitudinal PD through the pedals, Eq. 2 turn direction, the
straight lead-in prepended). Why this model and not the traffic agent kernel: the servo drives a
:class:`VehicleModel` through pedals and a steering angle, which the single-track model takes
and the traffic agent kernel (whose driver is built in, packed per agent in the traffic arrays)
does not; the vehicles' parameters come from the same validated vehicle files as the ego's.

Time: the fleet clock starts at 0 when the lead-in starts; planned time t_plan = t - lead_in_s
(the plan's collision times are shifted by ``lead_in_s`` in :attr:`ScriptedFleet.collisions`).
The plan is resampled at the servo's frame period (000's frames) before following.
Run-on (a choice): 002's stop point holds a vehicle at its last collision; a servo following it
would brake before the impact (its target stops) and the collision would only graze. So after
a vehicle's last collision its target keeps the arrival velocity for ``run_on_s`` and then holds:
the vehicle arrives at the planned speed and drives into the contact, where the crash physics
take it over (:meth:`ScriptedFleet.hand_over`).
Legs (a choice, issue 11's A4 analysis in the README): a vehicle in several collisions follows
its trajectory in legs, each cut at its next planned collision and run on straight past it (as
after the last one), the next leg from that collision's planned time. Pure pursuit steers at a
point ahead; on the whole trajectory it starts the turn that follows a collision before the
impact (A4's car A turned 7 deg towards the tree and met B's front with its rear), while 002
plans each collision with the pose the trajectory has there.
Frames: plan coordinates (relative to the road centre) go to the map frame by a rotation
``heading_rad`` and a translation ``origin_m``. After :meth:`ScriptedFleet.hand_over` a vehicle
is no longer driven or integrated here: its state is frozen at the hand-over, the crash physics
own it.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from vehicle_sim.core.accident.planners.params import PlannerParams
from vehicle_sim.core.accident.planners.plan import AccidentPlan, PlannedCollision, plan_accident
from vehicle_sim.core.accident.template import AccidentTemplate
from vehicle_sim.core.config import spec
from vehicle_sim.core.vehicle.params import VehicleParams
from vehicle_sim.core.vehicle.servo import PDServo, ServoParams, servo_vehicle
from vehicle_sim.core.vehicle.single_track import S_R, S_U, S_V, S_X, S_Y, S_YAW, SingleTrackModel


@dataclass(frozen=True)
class FleetParams:
    """How the scripted vehicles are stepped."""

    # lead-in set per vehicle (lead_in_frames); steering look-ahead 0.25 s / 2 m instead of the
    # servo's 0.5 s / 3 m (a choice, tuned on A4: pure pursuit cuts a corner by about its
    # look-ahead, and a vehicle that turns early meets its collision with a corner)
    servo: ServoParams = ServoParams(lead_in_m=0.0, steer_lookahead_s=0.25,
                                     min_steer_lookahead_m=2.0)
    lead_in_frames: int = spec(30, ge=1, le=600)
    """000's lead-in: frames of run-up (1 s)"""
    max_substep_s: float = spec(0.002, unit="s", gt=0.0, le=0.02)
    """model sub-step (a choice: the ego's 500 Hz planar rate)"""
    integrator: str = spec("rk4", choices=("euler", "midpoint", "rk4"))
    run_on_s: float = spec(0.5, unit="s", ge=0.0, le=5.0)
    """after its last collision a vehicle's target runs on at the arrival velocity this long, then
    holds (see the docstring)"""


@dataclass(frozen=True)
class FleetState:
    """Arrays over the vehicles (plan order): centre x_m, y_m [m], yaw_rad, velocity of the
    centre vx_mps, vy_mps in the MAP frame [m/s], yaw_rate_radps, box length_m, width_m [m],
    kind (car/truck), driving (False after the hand-over)."""

    names: tuple[str, ...]
    x_m: np.ndarray
    y_m: np.ndarray
    yaw_rad: np.ndarray
    vx_mps: np.ndarray
    vy_mps: np.ndarray
    yaw_rate_radps: np.ndarray
    length_m: np.ndarray
    width_m: np.ndarray
    kind: tuple[str, ...]
    driving: np.ndarray


class ScriptedFleet:
    """The planned vehicles of one accident, stepped at the caller's dt."""

    def __init__(self, plan: AccidentPlan, vehicles: Mapping[str, VehicleParams],
                 origin_m: tuple[float, float] = (0.0, 0.0), heading_rad: float = 0.0,
                 params: FleetParams | None = None):
        self.p = params if params is not None else FleetParams()
        self.plan = plan
        self._rot = (math.cos(heading_rad), math.sin(heading_rad))
        self._origin, self._heading = np.asarray(origin_m, dtype=float), heading_rad
        dt = self.p.servo.frame_dt_s
        self.lead_in_s = self.p.lead_in_frames * dt
        self._names = tuple(t.vehicle for t in plan.trajectories)
        self._kinds = tuple(t.kind for t in plan.trajectories)
        self._models, self._servos = [], []
        for traj in plan.trajectories:
            vp = vehicles[traj.kind]
            times = sorted(c.time_s for c in plan.collisions
                           if traj.vehicle in (c.actor, c.victim))
            # one servo per leg: up to each collision but the last (the approach, run on
            # straight past it), then the whole trajectory (module docstring: legs)
            legs = [(t_c, self._servo(vp, *self._cut(traj, t_c))) for t_c in times[:-1]
                    if self.p.run_on_s > 0.0]
            servo, speed0 = self._servo(vp, *self._with_run_on(traj))
            legs.append((math.inf, (servo, speed0)))
            model = SingleTrackModel(vp, self.p.integrator)
            first, speed0 = legs[0][1]
            pos, vel = first.target(-self.lead_in_s)
            yaw = math.atan2(vel[1], vel[0]) if speed0 > 0.0 else traj.yaw0_rad + heading_rad
            model.reset(float(pos[0]), float(pos[1]), yaw, float(np.linalg.norm(vel)))
            self._models.append(model)
            self._servos.append(tuple((t_c, sv) for t_c, (sv, _) in legs))
        self._sizes = np.array([(t.length_m, t.width_m) for t in plan.trajectories])
        self._driving = np.ones(len(self._names), dtype=bool)
        self._t_ns = 0

    def _servo(self, vp: VehicleParams, t_s, x_m, y_m) -> tuple[PDServo, float]:
        """000's servo on a plan trajectory resampled at its frames (map frame), with its
        lead-in; and the start speed [m/s]."""
        dt = self.p.servo.frame_dt_s
        frames = np.arange(math.ceil(t_s[-1] / dt) + 1) * dt
        xy = self._to_map(np.column_stack([np.interp(frames, t_s, x_m),
                                           np.interp(frames, t_s, y_m)]))
        speed0 = float(np.linalg.norm(xy[1] - xy[0])) / dt
        lead_m = speed0 * (self.p.lead_in_frames - 0.5) * dt if speed0 > 0.0 else 0.0
        sp = ServoParams(**{**self.p.servo.__dict__, "lead_in_m": lead_m})
        return PDServo(sp, servo_vehicle(vp), frames, xy), speed0

    def _leg(self, k: int, t_plan: float) -> PDServo:
        """Vehicle k's servo at plan time t_plan (the leg whose collision is still ahead)."""
        return next(sv for t_c, sv in self._servos[k] if t_plan < t_c)

    @classmethod
    def from_template(cls, template: AccidentTemplate, vehicles: Mapping[str, VehicleParams],
                      origin_m: tuple[float, float] = (0.0, 0.0), heading_rad: float = 0.0,
                      planner: PlannerParams | None = None,
                      params: FleetParams | None = None) -> ScriptedFleet:
        """Plan a validated template (002's planners) and build its fleet; vehicles: kind ->
        VehicleParams (sizes for the planner, dynamics for the models). Planning problems
        raise ConfigError naming the template file, the key and the reason."""
        sizes = {k: (v.chassis.length_m, v.chassis.width_m) for k, v in vehicles.items()}
        plan = plan_accident(template, sizes, planner)
        return cls(plan, vehicles, origin_m=origin_m, heading_rad=heading_rad, params=params)

    @property
    def time_s(self) -> float:
        """Fleet clock [s] (0 at the start of the lead-in)."""
        return self._t_ns * 1e-9

    @property
    def collisions(self) -> tuple[PlannedCollision, ...]:
        """The planned collisions in the map frame and on the fleet clock."""
        out = []
        for c in self.plan.collisions:
            out.append(PlannedCollision(
                c.index, c.time_s + self.lead_in_s, c.actor, c.victim, c.actor_part,
                c.victim_part, tuple(self._to_map(np.array([c.position_m]))[0]),
                self._pose_to_map(c.actor_pose), None if c.victim_pose is None
                else self._pose_to_map(c.victim_pose)))
        return tuple(out)

    def target(self, name: str) -> np.ndarray:
        """Planned position [m] (map) of vehicle ``name`` now."""
        t_plan = self.time_s - self.lead_in_s
        return self._leg(self._names.index(name), t_plan).target(t_plan)[0]

    def hand_over(self, name: str) -> None:
        """Stop driving (and integrating) vehicle ``name``: the crash physics take it over."""
        if name not in self._names:
            raise KeyError(f"no scripted vehicle {name!r} (known: {', '.join(self._names)})")
        self._driving[self._names.index(name)] = False

    def step(self, dt_s: float, skip: frozenset[str] = frozenset()) -> None:
        """Advance every driven vehicle by dt_s [s]: servo command, then model sub-steps;
        vehicles named in ``skip`` were moved over this step by the crash physics."""
        if not (math.isfinite(dt_s) and 0.0 < dt_s <= 1.0):
            raise ValueError(f"dt_s must be in (0, 1] s, got {dt_s}")
        t_plan = self.time_s - self.lead_in_s
        n = max(1, math.ceil(dt_s / self.p.max_substep_s - 1e-9))
        for k, model in enumerate(self._models):
            if not self._driving[k] or self._names[k] in skip:
                continue
            servo = self._leg(k, t_plan)
            x = model.state
            c, s = math.cos(x[S_YAW]), math.sin(x[S_YAW])
            vel = np.array([c * x[S_U] - s * x[S_V], s * x[S_U] + c * x[S_V]])
            controls = servo.command(t_plan, x[[S_X, S_Y]], float(x[S_YAW]), vel)
            for _ in range(n):
                model.step(controls, dt_s / n)
        self._t_ns += round(dt_s * 1e9)

    def state(self) -> FleetState:
        """The vehicles' states now (see FleetState)."""
        xs = np.array([m.state for m in self._models])
        c, s = np.cos(xs[:, S_YAW]), np.sin(xs[:, S_YAW])
        return FleetState(self._names, xs[:, S_X].copy(), xs[:, S_Y].copy(),
                          xs[:, S_YAW].copy(), c * xs[:, S_U] - s * xs[:, S_V],
                          s * xs[:, S_U] + c * xs[:, S_V], xs[:, S_R].copy(),
                          self._sizes[:, 0].copy(), self._sizes[:, 1].copy(), self._kinds,
                          self._driving.copy())

    def _with_run_on(self, traj) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The trajectory cut at its last collision, run on at the arrival velocity, then held
        (unchanged for a vehicle in no collision or standing at its last collision)."""
        times = [c.time_s for c in self.plan.collisions if traj.vehicle in (c.actor, c.victim)]
        if not times or self.p.run_on_s <= 0.0:
            return traj.t_s, traj.x_m, traj.y_m
        return self._cut(traj, max(times))

    def _cut(self, traj, t_cut: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The trajectory up to plan time t_cut, run on at its arrival velocity for
        ``run_on_s``, then held."""
        k = int(np.searchsorted(traj.t_s, t_cut - 1e-9)) + 1
        t, x, y = traj.t_s[:k], traj.x_m[:k], traj.y_m[:k]
        dt = t[-1] - t[-2]
        vx, vy = (x[-1] - x[-2]) / dt, (y[-1] - y[-2]) / dt
        run = self.p.run_on_s
        return (np.append(t, [t[-1] + run, traj.t_s[-1] + run + 1.0]),
                np.append(x, [x[-1] + vx * run] * 2), np.append(y, [y[-1] + vy * run] * 2))

    def statics_in_map(self) -> dict[str, tuple[float, float]]:
        """The scene's static objects (ENU as planned) -> their position [m] in the map."""
        objects = self.plan.scene.objects
        if not objects:
            return {}
        xy = self._to_map(np.array([(o.x_m, o.y_m) for o in objects]))
        return {o.id: (float(x), float(y)) for o, (x, y) in zip(objects, xy, strict=True)}

    def _to_map(self, xy: np.ndarray) -> np.ndarray:
        c, s = self._rot
        return np.column_stack([c * xy[:, 0] - s * xy[:, 1], s * xy[:, 0] + c * xy[:, 1]]) \
            + self._origin

    def _pose_to_map(self, pose: tuple[float, float, float]) -> tuple[float, float, float]:
        x, y = self._to_map(np.array([pose[:2]]))[0]
        return float(x), float(y), pose[2] + self._heading
