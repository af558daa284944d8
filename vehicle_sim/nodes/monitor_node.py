"""Run monitor: ends a bounded run at `duration` sim seconds and prints the run summary.

With PROGRESS_ENV set (vehicle_sim_run sets it when its output is a terminal) it also prints a
machine-readable progress line once per wall second, which the runner turns into its one-line
progress display: `PROGRESS_MARK sim_time_s duration_s rtf agents accidents`.
"""
from __future__ import annotations

import os
import threading
import time

from rclpy.node import Node

from vehicle_sim.core.run_summary import (
    MAX_ACCIDENT_DETAILS,
    MonitorParams,
    RunSummary,
    record_accident,
    write_summary,
)
from vehicle_sim.msg import (
    AccidentEvent,
    SimStatus,
    TrafficAgentArray,
    VehicleDamage,
    VehicleDamageArray,
    VehicleState,
)
from vehicle_sim.nodes import qos
from vehicle_sim.nodes.agent_cdr import agent_count
from vehicle_sim.nodes.conversions import to_ns
from vehicle_sim.nodes.main import NodeEntry, run_nodes
from vehicle_sim.nodes.params import declare_and_load
from vehicle_sim.progress import PROGRESS_ENV, PROGRESS_MARK

DRAIN_S = 0.5  # [s] wall time to take in what is still queued once the duration is reached
PROGRESS_PERIOD_S = 1.0  # [s] wall time between progress lines (a choice: a readable refresh)


class MonitorNode(Node):
    def __init__(self, **options) -> None:
        super().__init__("sim_monitor", **options)
        self.p = declare_and_load(self, MonitorParams)
        self.summary = RunSummary()
        self.accident_details: list[dict] = []
        self._rtf = 0.0
        self.done = False
        self._done_wall: float | None = None
        self._wall0 = time.monotonic()
        self.create_subscription(VehicleState, "vehicle/state", self._on_state, qos.STATE)
        self.create_subscription(SimStatus, "sim/status", self._on_status, qos.EVENT)
        self.create_subscription(AccidentEvent, "accidents", self._on_accident, qos.EVENT)
        # the agents' count from the bytes: deserialising thousands of agents held up the
        # 100 Hz state callback (a summary then counted ~60 % of the states)
        self.create_subscription(TrafficAgentArray, "traffic/agents", self._on_agents, qos.STREAM,
                                 raw=True)
        # the latest damage of each body (latched: a restarted monitor gets the current one)
        self.damage: dict[str, dict[str, list]] = {}
        self.create_subscription(VehicleDamage, "accidents/damage", self._on_damage, qos.LATCHED)
        # the traffic's bodies: each traffic node's latest full set (empty after a new run)
        self.traffic_damage: dict[str, dict[str, dict[str, list]]] = {}
        self.create_subscription(VehicleDamageArray, "accidents/traffic_damage",
                                 self._on_traffic_damage, qos.LATCHED)
        if os.environ.get(PROGRESS_ENV) == "1":
            self._progress_timer = threading.Timer(PROGRESS_PERIOD_S, self._progress)
            self._progress_timer.daemon = True
            self._progress_timer.start()

    def _progress(self) -> None:
        """One progress line (wall-clock thread: independent of sim time and of the executor)."""
        s = self.summary
        print(f"{PROGRESS_MARK} {s.sim_time_s:.3f} {self.p.duration:.3f} {self._rtf:.3f} "
              f"{s.traffic_agents_max} {s.accidents}", flush=True)
        if not self.done:
            self._progress_timer = threading.Timer(PROGRESS_PERIOD_S, self._progress)
            self._progress_timer.daemon = True
            self._progress_timer.start()

    def _on_state(self, msg: VehicleState) -> None:
        t_ns, end_ns = to_ns(msg.header.stamp), round(self.p.duration * 1e9)
        t_s, bounded = t_ns * 1e-9, self.p.duration > 0.0
        # in ns: a state at 30 s is 30.000000000000004 s as a float
        if self.done or (bounded and t_ns > end_ns):
            # the run reached its end (samples may be dropped in fast mode); the summary
            # covers [0, duration] exactly
            self.done = self.done or bounded
            self.summary.sim_time_s = max(self.summary.sim_time_s, self.p.duration)
            return
        self.summary.add_state(t_s, msg.pose.position.x, msg.pose.position.y,
                               msg.twist.linear.x)
        if bounded and t_ns >= end_ns:
            self.done = True

    @property
    def finished(self) -> bool:
        """Duration reached, and DRAIN_S of wall time passed for the status and events published
        up to it to arrive (a fast run outpaces this node's executor)."""
        if not self.done:
            return False
        if self._done_wall is None:
            self._done_wall = time.monotonic()
        return time.monotonic() - self._done_wall >= DRAIN_S

    def _on_status(self, msg: SimStatus) -> None:
        if self.p.duration > 0.0 and msg.sim_time > self.p.duration + 1e-9:
            return  # the summary covers [0, duration]
        self._rtf = msg.real_time_factor
        self.summary.add_status(msg.steps, msg.overruns, msg.real_time_factor,
                                msg.lateness_p99, msg.command_timeout, msg.rejected_commands,
                                msg.sim_time)

    def _on_accident(self, msg: AccidentEvent) -> None:
        record_accident(self.summary, self.accident_details,
                        time_s=to_ns(msg.header.stamp) * 1e-9, event_id=msg.id, actor=msg.actor,
                        victim=msg.victim, actor_part=msg.actor_part,
                        victim_part=msg.victim_part, impact_speed_mps=msg.impact_speed,
                        position_m=(msg.position.x, msg.position.y), source=msg.source,
                        fault_id=msg.fault_id)

    def _on_damage(self, msg: VehicleDamage) -> None:
        if len(self.damage) < MAX_ACCIDENT_DETAILS or msg.body in self.damage:
            self.damage[msg.body] = {"impulse_ns": [float(v) for v in msg.impulse],
                                     "level": [int(v) for v in msg.level]}

    def _on_traffic_damage(self, msg: VehicleDamageArray) -> None:
        self.traffic_damage[msg.source] = {
            d.body: {"impulse_ns": [float(v) for v in d.impulse],
                     "level": [int(v) for v in d.level]}
            for d in msg.bodies[:MAX_ACCIDENT_DETAILS]}

    def all_damage(self) -> dict[str, dict[str, list]]:
        """The latest damage of every body: the ego's, then each traffic node's."""
        out = dict(self.damage)
        for bodies in self.traffic_damage.values():
            out.update(bodies)
        return out

    def _on_agents(self, data: bytes) -> None:
        try:
            n = agent_count(data)
        except ValueError as exc:
            self.get_logger().warning(f"traffic/agents: {exc}", throttle_duration_sec=5.0)
            return
        self.summary.traffic_agents_max = max(self.summary.traffic_agents_max, n)

    def finish(self, reason: str) -> str:
        self.summary.wall_time_s = time.monotonic() - self._wall0
        self.summary.notes.append(reason)
        if self.summary.never_commanded():
            self.summary.notes.append("the dynamics' watchdog braked at every status: no "
                                      "command was fresh at any")
        return write_summary(self.summary, self.p.record_dir, self.accident_details,
                             self.all_damage())

    def stop(self) -> None:
        """The summary, printed (and written to record_dir) before the ROS clean-up."""
        reason = (f"reached duration {self.p.duration:g} s of simulated time" if self.done
                  else "interrupted")
        print(self.finish(reason), flush=True)


# how a process runs this node (nodes.main; vehicle_sim_compose runs several in one)
ENTRY = NodeEntry(MonitorNode, "sim_monitor", done=lambda node: node.finished)


def main(args: list[str] | None = None) -> int:
    return run_nodes([(ENTRY, [])], args)
