"""The floor of a lockstep run: the urban scenario's cores stepped in ONE process, in a fixed
order, with no ROS message between them (issue 14: the graph in lockstep is bound by per-message
Python in nine processes, bench/bench_lockstep.py; this bench measures what is left without it).

Per 20 ms frame (config/dynamics.yaml's lockstep_frame_steps at 1 kHz), with the graph's rates:
- dynamics: 20 SimLoop steps of config/dynamics.yaml's model, a snapshot at every raw state
  (every raw_state_decimation steps) and every state (100 Hz);
- traffic: TrafficSim.step at 20 Hz with the ego's pose (config/traffic.yaml: the urban map, the
  city params, seed 3);
- ego driver: Autopilot.update at its control rate (50 Hz) with the newest agents, its command
  into the loop;
- sensors: ImuModel.update at every raw state, GnssModel.update at every state (their presets);
- accidents: AccidentDetector.update_arrays at every state with the ego's and every agent's box
  as columns and the map's static objects (config/accident.yaml's margins).
Not in it: the ego's crash contacts (pybullet, ~15 us per step more where agents are near), the
bridge's washout and the ground-truth and monitor outputs (they build messages for the edges).

Prints the wall time per frame of each core and of the whole, the simulated seconds per wall
second, and the same loop with nothing in it (a bare Python loop of 20 iterations per frame) as
the reference of this run, with the load average.

    .venv/bin/python bench/bench_lockstep_cores.py [simulated seconds, default 60]
"""
from __future__ import annotations

import math
import os
import sys
import time
from collections import defaultdict

import numpy as np

from vehicle_sim.core.accident.detect import AccidentDetector, static_body
from vehicle_sim.core.accident.detect_arrays import N_ROWS, Bodies
from vehicle_sim.core.accident.params import AccidentParams
from vehicle_sim.core.config import load
from vehicle_sim.core.dynamics_params import DynamicsParams
from vehicle_sim.core.ego.autopilot import Autopilot
from vehicle_sim.core.ego.params import EgoDriverParams
from vehicle_sim.core.sensors.gnss import GnssModel
from vehicle_sim.core.sensors.imu import ImuModel
from vehicle_sim.core.sensors.node_params import GpsNodeParams, ImuNodeParams
from vehicle_sim.core.sim_loop import SimLoop
from vehicle_sim.core.traffic.mapfile import load_map
from vehicle_sim.core.traffic.network import Network
from vehicle_sim.core.traffic.params import TrafficParams
from vehicle_sim.core.traffic.sim import TrafficSim
from vehicle_sim.core.vehicle.factory import build_model
from vehicle_sim.core.vehicle.interface import Controls
from vehicle_sim.core.vehicle.params import VehicleParams
from vehicle_sim.paths import config_path

FRAME_STEPS = 20  # lockstep_frame_steps of config/dynamics.yaml
SEED = 3
TRAFFIC_PARAMS = "traffic/city.yaml"  # config/traffic.yaml
MAP = "maps/urban_grid.yaml"
EGO_ID = -1  # the ego's body id (agents: their uid >= 0)


class Cores:
    """Every core of the urban scenario, built as the nodes build them."""

    def __init__(self):
        self.p = DynamicsParams(mode="fast", command_timeout_s=1e6, vehicle_file=
                                "vehicles/medium_car.yaml", lockstep_frame_steps=FRAME_STEPS,
                                raw_state_decimation=5, clock_decimation=10)
        self.vehicle = load(VehicleParams, config_path(self.p.vehicle_file))
        model = build_model(self.p.model, self.vehicle, self.p.integrator,
                            self.p.dt_ns * 1e-9, None)
        self.loop = SimLoop(model, self.p)
        self.model = model
        network = Network(load_map(config_path(MAP)), MAP)
        self.traffic = TrafficSim(network, load(TrafficParams, config_path(TRAFFIC_PARAMS)),
                                  SEED)
        self.ego = EgoDriverParams()
        self.autopilot = Autopilot(network, self.vehicle, self.ego)
        self.imu = ImuModel.from_file(config_path(ImuNodeParams().preset_file), SEED)
        self.gnss = GnssModel.from_file(config_path(GpsNodeParams().preset_file), SEED)
        acc = AccidentParams()
        self.detector = AccidentDetector(acc.release_s, acc.part_margin_m)
        self.statics = [static_body(o) for o in load_map(config_path(MAP)).static_objects]
        c = self.vehicle.chassis
        self.ego_box = (c.length_m, c.width_m)
        self.every_state = self.p.every(self.p.state_rate_hz)
        self.every_traffic = round(0.05 / (self.p.dt_ns * 1e-9))
        self.every_control = self.p.every(self.ego.control_rate_hz)
        self.cost: dict[str, float] = defaultdict(float)
        self.accidents = 0

    def frame(self) -> None:
        for _ in range(FRAME_STEPS):
            start = time.perf_counter()
            self.loop.step()
            k, t_ns = self.loop.k, self.loop.t_ns
            raw = k % self.p.raw_state_decimation == 0
            state = k % self.every_state == 0
            snap = self.model.snapshot() if raw or state else None
            t1 = time.perf_counter()
            self.cost["dynamics"] += t1 - start
            if k % self.every_traffic == 0:
                self._traffic(snap or self.model.snapshot())
            t2 = time.perf_counter()
            if k % self.every_control == 0:
                self._control(t_ns, snap or self.model.snapshot())
            t3 = time.perf_counter()
            if raw:
                self.imu.update(t_ns * 1e-9, snap)
            if state:
                self.gnss.update(t_ns * 1e-9, snap)
            t4 = time.perf_counter()
            if state:
                self._detect(t_ns, snap)
            t5 = time.perf_counter()
            self.cost["traffic"] += t2 - t1
            self.cost["ego driver"] += t3 - t2
            self.cost["imu + gnss"] += t4 - t3
            self.cost["accident detection"] += t5 - t4

    def _traffic(self, s) -> None:
        v = s.velocity_mps
        self.traffic.step(0.05, (float(s.position_m[0]), float(s.position_m[1]),
                                 float(s.rpy_rad[2]), float(math.hypot(v[0], v[1]))))
        a = self.traffic.agents()
        self.agents = a
        rows = np.column_stack([a["x"], a["y"], a["yaw"], a["speed"], a["length"], a["width"]])
        self.autopilot.set_agents(rows)
        names, states = self.traffic.light_states()
        self.autopilot.set_lights(dict(zip(names, (int(x) for x in states), strict=True)))

    def _control(self, t_ns: int, s) -> None:
        v = s.velocity_mps
        cmd = self.autopilot.update(t_ns * 1e-9, float(s.position_m[0]), float(s.position_m[1]),
                                    float(s.rpy_rad[2]), float(v[0]))
        self.loop.set_command(Controls(steer_rad=cmd.steer_rad, throttle=cmd.throttle,
                                       brake=cmd.brake, gear=cmd.gear))

    def _detect(self, t_ns: int, s) -> None:
        """The ego's and every agent's box as columns (no object per agent)."""
        yaw = float(s.rpy_rad[2])
        c, si = math.cos(yaw), math.sin(yaw)
        u, w = float(s.velocity_mps[0]), float(s.velocity_mps[1])
        a = getattr(self, "agents", {"uid": np.zeros(0, np.int64)})
        n = len(a["uid"])
        ids, state = np.empty(1 + n, np.int64), np.empty((N_ROWS, 1 + n))
        ids[0], ids[1:] = EGO_ID, a["uid"]
        state[:, 0] = (float(s.position_m[0]), float(s.position_m[1]), yaw, *self.ego_box,
                       c * u - si * w, si * u + c * w, float(s.angular_velocity_radps[2]))
        if n:
            h, sp = a["yaw"], a["speed"]
            for row, col in enumerate((a["x"], a["y"], h, a["length"], a["width"],
                                       sp * np.cos(h), sp * np.sin(h), 0.0)):
                state[row, 1:] = col
        self.accidents += len(self.detector.update_arrays(
            t_ns, Bodies(ids, body_name, state), "ego", self.statics))


def body_name(body_id: int) -> str:
    return "ego" if body_id == EGO_ID else f"agent_{body_id}"


def bare(frames: int) -> float:
    """Wall time of the same number of frames of an empty 20-iteration loop [s]."""
    start = time.perf_counter()
    n = 0
    for _ in range(frames):
        for _ in range(FRAME_STEPS):
            n += 1
    return time.perf_counter() - start


def main() -> None:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 60.0
    cores = Cores()
    frame_s = FRAME_STEPS * cores.p.dt_ns * 1e-9
    warm = round(2.0 / frame_s)  # compile and fill the city first
    for _ in range(warm):
        cores.frame()
    cores.cost.clear()
    frames = round(seconds / frame_s)
    start = time.perf_counter()
    for _ in range(frames):
        cores.frame()
    wall = time.perf_counter() - start
    print(f"urban cores in one process: {seconds:g} s simulated after 2 s of warm-up, seed {SEED}, "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    print(f"  {frames} frames of {frame_s * 1e3:.0f} ms: wall {wall / frames * 1e3:.3f} ms per "
          f"frame, {seconds / wall:.1f}x real time ({len(cores.traffic.agents()['x'])} agents "
          f"at the end, {cores.accidents} ego accidents)")
    for name, total in sorted(cores.cost.items(), key=lambda kv: -kv[1]):
        print(f"    {name:20s} {total / frames * 1e3:7.3f} ms per frame")
    ref = bare(frames)
    print(f"  bare loop of the same frames: {ref / frames * 1e3:.4f} ms per frame; "
          f"cores / bare: {wall / ref:.0f}")
    print(f"  load average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
