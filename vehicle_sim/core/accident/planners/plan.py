"""Paper 002's planning manager: pre-planner -> position -> trajectory -> accident -> temporal.

Output: one timed trajectory per vehicle (t_s, x_m, y_m arrays, ENU metres relative to the
road centre, seconds from the scene start) and the planned collisions (time, contact point,
parts, the centres and headings of both participants at that moment).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from vehicle_sim.core.accident.planners.accident import Track, plan_collisions
from vehicle_sim.core.accident.planners.params import PlannerParams
from vehicle_sim.core.accident.planners.position import StartPose, place
from vehicle_sim.core.accident.planners.preplanner import Scene, preplan
from vehicle_sim.core.accident.planners.temporal import collision_time, first_part, time_values
from vehicle_sim.core.accident.planners.trajectory import plan_polyline
from vehicle_sim.core.accident.template import AccidentTemplate
from vehicle_sim.core.config import ConfigError

MAX_DURATION_S = 300.0  # a scene is an accident at one junction (bounds the fleet's arrays)


@dataclass(frozen=True)
class TimedTrajectory:
    """A vehicle's planned motion: times t_s [s] (strictly increasing, from 0) and centre
    positions x_m, y_m [m]; kind and box size [m]; start heading yaw0_rad."""

    vehicle: str
    kind: str
    length_m: float
    width_m: float
    yaw0_rad: float
    t_s: np.ndarray
    x_m: np.ndarray
    y_m: np.ndarray


@dataclass(frozen=True)
class PlannedCollision:
    """002's collision as planned: time [s], contact point [m], parts, participant poses
    (x, y, yaw) [m, rad] (victim_pose None for a static object)."""

    index: int
    time_s: float
    actor: str
    victim: str
    actor_part: str
    victim_part: str
    position_m: tuple[float, float]
    actor_pose: tuple[float, float, float]
    victim_pose: tuple[float, float, float] | None


@dataclass(frozen=True)
class AccidentPlan:
    """All planners' output for one template."""

    name: str
    duration_s: float
    trajectories: tuple[TimedTrajectory, ...]
    collisions: tuple[PlannedCollision, ...]
    scene: Scene


def plan_accident(tpl: AccidentTemplate, sizes_m: Mapping[str, tuple[float, float]],
                  params: PlannerParams | None = None) -> AccidentPlan:
    """Plan a validated template; sizes_m: vehicle kind -> (length, width) [m]."""
    params = params if params is not None else PlannerParams()
    scene = preplan(tpl, sizes_m)
    poses = place(scene, params)
    tracks = {}
    for v in scene.vehicles:
        base = plan_polyline(v, poses[v.id], params, scene.source, scene.road)
        t = Track(v, base, yaw_rad=poses[v.id].yaw_rad)
        if t.standing:
            t.points, t.tags = [base[0].copy()], [-1]
        tracks[v.id] = t
    placements = plan_collisions(scene, tracks, params)
    check_chains(scene)
    n = len(scene.collisions)
    timed = {}
    for vid, t in tracks.items():
        pts, tags = (t.points, t.tags) if (t.cut or t.standing) else (list(t.base),
                                                                       [-1] * len(t.base))
        timed[vid] = time_values(np.array(pts), tags, n, scene.t_split)
    duration = _duration(scene, timed, tracks, params)
    trajectories = tuple(_trajectory(t.vehicle, poses[vid], *timed[vid], duration)
                         for vid, t in tracks.items())
    collisions = tuple(
        PlannedCollision(c.index, collision_time(c.index, n, scene.t_split) * duration,
                         c.actor, c.victim, c.actor_part,
                         c.victim_part,
                         placements[c.index].contact_m, placements[c.index].actor_pose,
                         placements[c.index].victim_pose)
        for c in scene.collisions)
    return AccidentPlan(scene.name, duration, trajectories, collisions, scene)


def _trajectory(v, pose: StartPose, times: np.ndarray, pts: np.ndarray,
                duration_s: float) -> TimedTrajectory:
    return TimedTrajectory(v.id, v.kind, v.length_m, v.width_m, pose.yaw_rad,
                           times * duration_s, pts[:, 0].copy(), pts[:, 1].copy())


def _duration(scene: Scene, timed: dict, tracks: dict, p: PlannerParams) -> float:
    """Seconds for time value 1: the fastest first part runs at the template's speed; then every
    segment's speed is checked against ``max_speed_mps``."""
    rate = 0.0  # metres per unit time value
    for vid, (times, pts) in timed.items():
        tag_times = [collision_time(k, len(scene.collisions), scene.t_split)
                     for k in tracks[vid].tags if k >= 0]
        length, t_first = first_part(times, pts, tag_times[0] if tag_times else 1.0)
        if t_first > 0.0:
            rate = max(rate, length / t_first)
    if rate <= 0.0:
        raise ConfigError(scene.source, "vehicles", "no vehicle moves before the collisions")
    duration = rate / scene.speed_mps
    if duration > MAX_DURATION_S:
        raise ConfigError(scene.source, "speed_mps", f"the scene would last {duration:.0f} s "
                          f"(> {MAX_DURATION_S:.0f} s): paths too long for this speed")
    for vid, (times, pts) in timed.items():
        speed = np.linalg.norm(np.diff(pts, axis=0), axis=1) / (np.diff(times) * duration)
        if speed.size and float(speed.max()) > p.max_speed_mps:
            k = int(np.argmax(speed))
            raise ConfigError(scene.source, tracks[vid].vehicle.key,
                              f"{vid!r} would need {speed[k]:.1f} m/s (> {p.max_speed_mps}) "
                              f"between its points {k} and {k + 1}: a collision it cannot "
                              f"reach in time")
    return duration


def check_chains(scene: Scene) -> None:
    """Every planned collision must happen through physics on at least one side. In a scene a
    vehicle whose event chain goes on is a prescribed body of the crash world until shortly
    before its last collision (core.accident.scene), and a prescribed body meets neither another
    prescribed one nor a static object. So: a collision with a static object is its actor's last,
    and of two vehicles in a collision at least one has it as its last (ConfigError otherwise)."""
    statics = {o.id for o in scene.objects}
    last: dict[str, int] = {}
    for k, c in enumerate(scene.collisions):
        last[c.actor] = last[c.victim] = k
    for k, c in enumerate(scene.collisions):
        if c.victim in statics and last[c.actor] != k:
            raise ConfigError(scene.source, f"collisions[{k}]",
                              f"{c.actor!r} hits static object {c.victim!r} before a later "
                              f"collision of its own: a collision with a static object must be "
                              f"the vehicle's last")
        if c.victim not in statics and k not in (last[c.actor], last[c.victim]):
            raise ConfigError(scene.source, f"collisions[{k}]",
                              f"both {c.actor!r} and {c.victim!r} have later collisions: one "
                              f"of them must end its event chain here (it is then moved by the "
                              f"crash physics)")
