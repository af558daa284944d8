"""The urban scenario's cores in one process, stepped in a fixed order (issue 14: lockstep at
10x real time; in the node graph every output crosses DDS into eight Python processes, and that
per-message Python, not the physics, bounds a lockstep frame).

Each core is built from the parameters of its node (EngineParams, read from the scenario's one
declaration by vehicle_sim.engine_setup) and is the same object the node steps; what the nodes
did between them is done here, at the nodes' rates, in this order after each physics step k
(sim time t = k dt, dynamics params):
1. the physics step (core.sim_loop.SimLoop) with the ego's crash wrench (core.accident.ego_crash)
   against the map's objects and the newest traffic agents;
2. the step's outputs as the dynamics node publishes them (step_outputs): /clock, the raw state,
   the state; the IMU samples every raw state, the GNSS receiver every state (its own rate
   inside), the run summary every state;
3. a traffic step when t is on the traffic's grid (core.accident.traffic_world: crash world,
   agents, scene) with the ego of t; its agents go to the ego's crash physics, the autopilot and
   the edges;
4. the autopilot on its control grid with the state of t; its command acts from step k + 1 (the
   dynamics node's ``vehicle/control:=autonomy/control``: no rig, no stack in the loop).
Accidents (with an accident node in the scenario; core.accident.watch, the accident node's law):
the ego at every state against the newest traffic step's agents moved to the state's time, the
agents among themselves at every traffic step.
What leaves goes through ``Edges`` (the node publishes it; a test records it). Nothing reads the
wall clock: with one seed a run repeats exactly, at whatever speed the machine gives.
"""
from __future__ import annotations

import dataclasses
from typing import Protocol

import numpy as np

from vehicle_sim.core.accident.crash_params import crash_classes
from vehicle_sim.core.accident.ego_contacts import AgentArrays
from vehicle_sim.core.accident.ego_crash import EgoCrash, crash_setup
from vehicle_sim.core.accident.traffic_world import TrafficWorld
from vehicle_sim.core.accident.watch import COLUMNS, AccidentWatch, Event
from vehicle_sim.core.config import load
from vehicle_sim.core.ego.autopilot import BRAKING, Autopilot, Command
from vehicle_sim.core.engine.params import EngineParams
from vehicle_sim.core.run_summary import RunSummary, record_accident
from vehicle_sim.core.sensors.build import GPS_STREAM, IMU_STREAM, gnss_model, imu_model, sensor_rng
from vehicle_sim.core.sensors.gnss import GnssFix
from vehicle_sim.core.sensors.imu import ImuSample
from vehicle_sim.core.sim_loop import Hooks, SimLoop, step_outputs
from vehicle_sim.core.traffic.agents import agent_ids
from vehicle_sim.core.vehicle.factory import build_model
from vehicle_sim.core.vehicle.full14.terrain import TerrainParams
from vehicle_sim.core.vehicle.interface import Controls, VehicleSnapshot
from vehicle_sim.core.vehicle.params import VehicleParams
from vehicle_sim.paths import config_path

SOURCE_DETECTED, SOURCE_SCRIPTED = 0, 1  # AccidentEvent.SOURCE_* (the summary's "source")


class Edges(Protocol):
    """Where the engine's outputs go (sim times t_ns [ns]); every method may do nothing."""

    def clock(self, t_ns: int) -> None: ...
    def vehicle(self, t_ns: int, snap: VehicleSnapshot, raw: bool, state: bool) -> None: ...
    def imu(self, t_ns: int, sample: ImuSample) -> None: ...
    def fix(self, fix: GnssFix) -> None: ...
    def traffic(self, t_ns: int, agents: dict[str, np.ndarray],
                lights: tuple[list[str], np.ndarray]) -> None: ...
    def command(self, t_ns: int, cmd: Command) -> None: ...
    def accident(self, event: Event) -> None: ...
    def damage(self, t_ns: int, impulse_ns: list[float], levels: list[int]) -> None: ...
    def log(self, line: str) -> None: ...


class UrbanEngine:
    """The cores of module docstring's order; ``frame()`` runs one lockstep frame."""

    def __init__(self, p: EngineParams, edges: Edges):
        self.p, self.edges = p, edges
        d = p.dynamics
        dt_s = d.dt_ns * 1e-9
        self.vehicle = load(VehicleParams, config_path(d.vehicle_file))
        terrain = load(TerrainParams, config_path(d.terrain_file)) if d.terrain_file else None
        self.model = build_model(d.model, self.vehicle, d.integrator, dt_s, terrain)
        # paced by nothing and waiting for nobody: the engine is the whole frame
        self.loop = SimLoop(self.model, dataclasses.replace(d, mode="fast"))
        self.hooks = Hooks(after_step=lambda k, t_ns: None, status=lambda s: None)
        self.crash = None
        if d.map_file:
            self.crash = EgoCrash(crash_setup(d.map_file, self.vehicle, dt_s), self.model,
                                  edges.damage, edges.log)
            self.hooks.before_step = self.crash.before_step
        self.world = TrafficWorld(p.traffic)
        self.autopilot = Autopilot(self.world.sim.network, self.vehicle, p.ego_driver)
        self.imu = imu_model(p.imu, sensor_rng(p.imu.seed, IMU_STREAM))
        self.gnss = gnss_model(p.gps, sensor_rng(p.gps.seed, GPS_STREAM))
        c = self.vehicle.chassis
        self.watch = AccidentWatch(p.accident, (c.length_m, c.width_m)) if p.accident else None
        self.agent_cols: tuple[int, dict[str, np.ndarray]] | None = None  # (stamp, watch's)
        self.summary = RunSummary()
        self.accident_details: list[dict] = []  # as the sim_monitor's summary lists them
        self.traffic_dt_ns = p.traffic.dt_ns
        self.control_dt_ns = round(1e9 / p.ego_driver.control_rate_hz)
        self._braking = False  # the autopilot failed at its last period: the brake holds

    @property
    def t_ns(self) -> int:
        return self.loop.t_ns

    def frame(self) -> None:
        """``lockstep_frame_steps`` physics steps and everything due at them."""
        for _ in range(self.p.dynamics.lockstep_frame_steps):
            self.step()

    def step(self) -> None:
        self.loop.step(self.hooks)
        k, t_ns = self.loop.k, self.loop.t_ns
        clock, raw, state = step_outputs(self.p.dynamics, k)
        traffic = t_ns % self.traffic_dt_ns == 0
        control = t_ns % self.control_dt_ns == 0
        if clock:
            self.edges.clock(t_ns)
        if not (raw or state or traffic or control):
            return
        snap = self.model.snapshot()
        snap.require_finite()
        if raw or state:
            self.edges.vehicle(t_ns, snap, raw, state)
        if raw:
            self._imu(t_ns, snap)
        if state:
            self._state(t_ns, snap)
        if traffic:
            self._traffic(t_ns, snap)
        if control:
            self._control(t_ns, snap)

    def _imu(self, t_ns: int, snap: VehicleSnapshot) -> None:
        sample = self.imu.update(t_ns * 1e-9, snap)
        if sample is not None:
            self.edges.imu(t_ns, sample)

    def _state(self, t_ns: int, snap: VehicleSnapshot) -> None:
        for fix in self.gnss.update(t_ns * 1e-9, snap):
            self.edges.fix(fix)
        self.summary.add_state(t_ns * 1e-9, float(snap.position_m[0]), float(snap.position_m[1]),
                               float(snap.velocity_mps[0]))
        self.summary.physics_steps = self.loop.k
        if self.watch is not None:
            p, v, w = snap.position_m, snap.velocity_mps, snap.angular_velocity_radps
            ego = (float(p[0]), float(p[1]), float(snap.rpy_rad[2]), float(v[0]), float(v[1]),
                   float(w[2]))
            timeout_ns = round(self.watch.p.agent_timeout_s * 1e9)
            current = ([self.agent_cols] if self.agent_cols is not None
                       and t_ns - self.agent_cols[0] <= timeout_ns else [])
            self._accidents(lambda: self.watch.ego(t_ns, ego, current))

    def _traffic(self, t_ns: int, snap: VehicleSnapshot) -> None:
        ego = (float(snap.position_m[0]), float(snap.position_m[1]), float(snap.rpy_rad[2]),
               float(snap.velocity_mps[0]))
        self.world.step(t_ns, self.traffic_dt_ns * 1e-9, ego, t_ns)
        a = self.world.with_scene(self.world.sim.agents(include_ghosts=True))
        lights = self.world.sim.light_states()
        if self.crash is not None:
            self.crash.set_agents(agent_arrays(a, t_ns))
        self.autopilot.set_agents(np.column_stack(
            [a["x"], a["y"], a["yaw"], a["speed"], a["length"], a["width"]]))
        self.autopilot.set_lights(dict(zip(lights[0], lights[1].tolist(), strict=True)))
        self.summary.traffic_agents_max = max(self.summary.traffic_agents_max, len(a["uid"]))
        self.edges.traffic(t_ns, a, lights)
        if self.watch is not None:
            cols = watch_columns(a)
            self.agent_cols = (t_ns, cols)
            self.watch.remember_faults(t_ns, cols)
            self._accidents(lambda: self.watch.agents(t_ns, [(t_ns, cols)]))

    def _accidents(self, detect) -> None:
        """The accidents ``detect()`` reports, to the summary and the edges (a body that is not
        finite: one log line, the detection skipped, as the accident node does)."""
        try:
            events = detect()
        except ValueError as exc:
            self.edges.log(f"accident detection skipped: {exc}")
            return
        for e in events:
            c = e.contact
            record_accident(self.summary, self.accident_details, time_s=c.t_ns * 1e-9,
                            event_id=self.summary.accidents + 1, actor=c.actor,
                            victim=c.victim, actor_part=c.actor_part, victim_part=c.victim_part,
                            impact_speed_mps=c.impact_speed_mps, position_m=c.position_m,
                            source=SOURCE_SCRIPTED if e.scripted else SOURCE_DETECTED,
                            fault_id=e.fault_id)
            self.edges.accident(e)

    def _control(self, t_ns: int, snap: VehicleSnapshot) -> None:
        try:
            cmd = self.autopilot.update(t_ns * 1e-9, float(snap.position_m[0]),
                                        float(snap.position_m[1]), float(snap.rpy_rad[2]),
                                        float(snap.velocity_mps[0]))
        except ValueError as exc:  # as the ego driver node: full brake; a line when it starts
            if not self._braking:
                self.edges.log(f"autopilot: {exc}; braking")
            self._braking, cmd = True, BRAKING
        else:
            self._braking = False
        self.loop.set_command(Controls(steer_rad=cmd.steer_rad, throttle=cmd.throttle,
                                       brake=cmd.brake, gear=cmd.gear))
        self.edges.command(t_ns, cmd)

    def damage_book(self, ego: dict[str, list] | None) -> dict[str, dict[str, list]]:
        """Every damaged body's parts, as the monitor's summary lists them: the ego's (its
        latest report, ``ego``: impulse_ns, level) then the traffic's."""
        mine = {self.crash.name: ego} if ego and self.crash is not None else {}
        return mine | self.world.damage_book()

    def close(self) -> None:
        self.world.close()


def watch_columns(a: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """core.accident.watch's agent columns of agent columns (core.traffic.sim.agents; no
    instructor in the engine: no fault ids)."""
    n = len(a["uid"])
    cols = {k: a[k] for k in COLUMNS if k in a}
    cols["id"] = agent_ids(a["uid"]).astype(np.int64)  # TrafficAgent.id, as the nodes name them
    cols["fault_id"] = np.asarray(a.get("fault_id", np.zeros(n)), np.int64)
    return cols


def agent_arrays(a: dict[str, np.ndarray], t_ns: int) -> AgentArrays:
    """The ego crash physics' agents from agent columns (core.traffic.sim.agents) of sim time
    t_ns (a scene's vehicles carry their ``kind``; the traffic's are cars)."""
    n = len(a["uid"])
    return AgentArrays.from_columns(
        agent_ids(a["uid"]), np.full(n, t_ns), a["x"], a["y"], a["yaw"], a["speed"],
        a["lateral_speed"], a["yaw_rate"], a["length"], a["width"],
        crash_classes(a.get("kind", np.zeros(n))))
