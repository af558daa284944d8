"""Ego driver node: an autopilot (paper 004 driver model, core.ego.Autopilot) that drives the ego
vehicle along a seeded random route of the map, publishing VehicleControl on
``autonomy/control`` (run the dynamics node with ``vehicle/control:=autonomy/control``, or
put an input mux between them).

Thin: parameters come from EgoDriverParams, the driving from core.ego. This file only converts
messages and keeps the latest inputs.

Time: with use_sim_time (set for every node of the graph) the control timer follows /clock, at
``control_rate_hz`` of simulation time; every command is stamped with the simulation time it was
computed at. Without a ``vehicle/state`` newer than ``state_timeout_s`` it commands full brake.

Inputs: ``vehicle/state`` (pose in odom = map, static identity map -> odom as the traffic node
assumes), ``traffic/agents`` (every shard's latest set, see agent_inputs; a shard silent for
``state_timeout_s`` is dropped) and ``traffic/lights`` (vehicle lights by "signal:lane" id).
Both traffic inputs are optional: without agents the ego sees no leader; without light states
it treats every light as green. Loss of communication (link_faults): FaultCommand LINK_DROP /
LINK_DELAY with target ``ego_driver`` (this node's name) and channel ``traffic/agents`` or
``traffic/lights`` drop or delay those inputs (in lockstep: the arrays the frame releases).
"""
from __future__ import annotations

import numpy as np
from rclpy.node import Node

from vehicle_sim.core.config import load
from vehicle_sim.core.ego.autopilot import BRAKING, Autopilot, warm_up
from vehicle_sim.core.ego.params import EgoDriverParams
from vehicle_sim.core.traffic.mapfile import load_map
from vehicle_sim.core.traffic.network import Network
from vehicle_sim.core.vehicle.params import VehicleParams
from vehicle_sim.msg import (
    LockstepAck,
    TrafficAgentArray,
    TrafficLightArray,
    VehicleControl,
    VehicleState,
)
from vehicle_sim.nodes import conversions as conv
from vehicle_sim.nodes import qos
from vehicle_sim.nodes.agent_cdr import Agents, agents_of, yaws
from vehicle_sim.nodes.agent_inputs import AgentSnapshots
from vehicle_sim.nodes.fault_link import FaultLink
from vehicle_sim.nodes.link_faults import LinkFaults
from vehicle_sim.nodes.lockstep_inputs import LockstepInputs
from vehicle_sim.nodes.lockstep_peer import LockstepPeer
from vehicle_sim.nodes.main import NodeEntry, run_nodes
from vehicle_sim.nodes.params import declare_and_load
from vehicle_sim.paths import config_path
from vehicle_sim.warm import warm_ego

AGENTS, LIGHTS = "traffic/agents", "traffic/lights"  # the gated inputs (link faults)


def stamp_ns(item: Agents | TrafficLightArray) -> int:
    """An input's stamp [ns]: the agents read from their bytes, or a light array."""
    return item.stamp_ns if isinstance(item, Agents) else conv.to_ns(item.header.stamp)


class EgoDriverNode(Node):
    def __init__(self, **options) -> None:
        super().__init__("ego_driver", **options)
        self.p = declare_and_load(self, EgoDriverParams)
        vehicle = load(VehicleParams, config_path(self.p.vehicle_file))
        map_path = config_path(self.p.map_file)
        network = Network(load_map(map_path), str(map_path))
        warm_up(network)  # numba compile now, not during the first control periods
        self.autopilot = Autopilot(network, vehicle, self.p)
        self.state: VehicleState | None = None
        self._last_command: VehicleControl | None = None
        self.agents = AgentSnapshots(
            lambda line: self.get_logger().warning(line, throttle_duration_sec=5.0),
            "the autopilot's leaders and junctions")
        self.lights: dict[str, int] = {}
        self.pub = self.create_publisher(VehicleControl, "autonomy/control", qos.COMMAND)
        self.create_subscription(VehicleState, "vehicle/state", self._on_state, qos.STATE)
        self.create_subscription(TrafficAgentArray, AGENTS, self._on_agents, qos.AGENTS_IN,
                                 raw=True)  # (agent_cdr: thousands of agents)
        self.create_subscription(TrafficLightArray, LIGHTS, self._on_lights, qos.LIGHTS)
        self.links = LinkFaults(self.get_name(), (AGENTS, LIGHTS))
        self.faults = FaultLink(self, self.get_name(), self.links.check, now_ns=self._now_ns,
                                on_change=self.links.update)
        if self.p.lockstep:
            self._lockstep_setup()
        else:
            self.create_timer(1.0 / self.p.control_rate_hz, self._on_timer)
        self.get_logger().info(f"map {self.p.map_file}, vehicle {self.p.vehicle_file}, seed "
                               f"{self.p.seed}, {self.p.control_rate_hz:g} Hz on "
                               f"{'sim' if self.get_parameter('use_sim_time').value else 'wall'}"
                               f" time")

    # ---- inputs ------------------------------------------------------------------------------
    def _on_state(self, msg: VehicleState) -> None:
        self.state = msg
        if self.p.lockstep:
            self.lockstep.pump()

    def _on_agents(self, data: bytes) -> None:
        agents = agents_of(self, data, AGENTS)
        if agents is None:
            return
        if self.p.lockstep:
            self._hold(self.inputs.on_agents(agents), agents.source)
        else:
            self._gate(AGENTS, [agents], self._now_ns())

    def _on_lights(self, msg: TrafficLightArray) -> None:
        if self.p.lockstep:
            self._hold(self.inputs.on_lights(msg), msg.source)
        else:
            self._gate(LIGHTS, [msg], self._now_ns())

    def _now_ns(self) -> int:
        """Sim time of this node: the frame's in lockstep, else the clock's."""
        if self.p.lockstep:
            return self._prev_ns or 0
        return self.get_clock().now().nanoseconds

    def _gate(self, topic: str, msgs: list, now_ns: int) -> None:
        """Traffic inputs through the link faults (link_faults), then into use."""
        use = self.agents.update if topic == AGENTS else self._apply_lights
        out = [m for msg in msgs for m in self.links.offer(topic, msg, stamp_ns(msg), now_ns)]
        for m in self.links.release(topic, now_ns) + out:
            use(m)

    def _hold(self, held: bool, source: str) -> None:
        if not held:
            self.get_logger().warning(
                f"lockstep: traffic output from {source!r} ignored, not in lockstep_inputs "
                f"{list(self.p.lockstep_inputs)}", throttle_duration_sec=5.0)
        self.lockstep.pump()

    def _apply_lights(self, msg: TrafficLightArray) -> None:
        self.lights.update({lt.id: lt.state for lt in msg.lights if not lt.pedestrian})

    # ---- lockstep ----------------------------------------------------------------------------
    def _lockstep_setup(self) -> None:
        """Frames on /clock ticks (LockstepPeer): frame t waits for the vehicle state of t and
        the traffic outputs of the frame before (LockstepInputs), controls at multiples of the
        control period, and its ack names the newest command."""
        self.inputs = LockstepInputs(self.p.lockstep_inputs)
        self._prev_ns: int | None = None
        self._command_ns = 0
        self._period_ns = round(1e9 / self.p.control_rate_hz)
        self.lockstep = LockstepPeer(self, self._frame_ready, self._frame, self._resend)
        self.create_subscription(LockstepAck, "/sim/lockstep_ack", self._on_ack,
                                 qos.LOCKSTEP_ACK)

    def _on_ack(self, msg: LockstepAck) -> None:
        self.inputs.on_ack(msg)
        self.lockstep.pump()

    def _resend(self) -> None:
        """The last command again (lockstep stall: the dynamics may wait for it)."""
        if self._last_command is not None:
            self.pub.publish(self._last_command)

    def _frame_ready(self, t_ns: int) -> bool:
        state_in = self.state is not None and conv.to_ns(self.state.header.stamp) >= t_ns
        return state_in and self.inputs.complete(self._prev_ns)

    def _frame(self, t_ns: int) -> tuple[int, int]:
        agents, lights = self.inputs.release_arrays(self._prev_ns)
        self.faults.expire(t_ns)
        self._gate(AGENTS, agents, t_ns)
        self._gate(LIGHTS, lights, t_ns)
        self._prev_ns = t_ns
        if t_ns % self._period_ns == 0:
            self._control(t_ns)
        return 0, self._command_ns

    # ---- control -----------------------------------------------------------------------------
    def _on_timer(self) -> None:
        now_ns = self.get_clock().now().nanoseconds
        self.faults.expire(now_ns)
        self._gate(AGENTS, [], now_ns)
        self._gate(LIGHTS, [], now_ns)
        self._control(now_ns)

    def _publish(self, out: VehicleControl, now_ns: int) -> None:
        self._command_ns, self._last_command = now_ns, out
        self.pub.publish(out)

    def _control(self, now_ns: int) -> None:
        timeout_ns = round(self.p.state_timeout_s * 1e9)
        s = self.state
        if s is None:
            return  # nothing to drive yet (the dynamics watchdog holds the brakes)
        t_state = conv.to_ns(s.header.stamp)
        out = VehicleControl(steering_angle=BRAKING.steer_rad, throttle=BRAKING.throttle,
                             brake=BRAKING.brake, gear=BRAKING.gear)  # until it drives
        out.header.stamp = conv.stamp(now_ns)
        if now_ns - t_state > timeout_ns:
            self.get_logger().warning("vehicle/state is stale: braking",
                                      throttle_duration_sec=5.0)
            self._publish(out, now_ns)
            return
        rows = self.agents.current(t_state, timeout_ns)[1]
        pose = rows["pose"]
        self.autopilot.set_agents(np.column_stack([pose[:, 0], pose[:, 1], yaws(rows),
                                                   rows["speed"], rows["length"],
                                                   rows["width"]]))
        self.autopilot.set_lights(self.lights)
        yaw = conv.rpy_from_quaternion(s.pose.orientation)[2]
        try:
            cmd = self.autopilot.update(t_state * 1e-9, s.pose.position.x, s.pose.position.y,
                                        yaw, s.twist.linear.x)
        except ValueError as exc:
            self.get_logger().error(f"autopilot: {exc}; braking", throttle_duration_sec=5.0)
            self._publish(out, now_ns)
            return
        out.steering_angle, out.throttle, out.brake, out.gear = (
            cmd.steer_rad, cmd.throttle, cmd.brake, cmd.gear)
        self._publish(out, now_ns)
        self.get_logger().debug(f"{cmd.lane} s={cmd.s_m:.1f} lat={cmd.lateral_m:+.2f} "
                                f"{cmd.reference} a={cmd.accel_mps2:+.2f}")


# how a process runs this node (nodes.main; vehicle_sim_compose runs several in one)
ENTRY = NodeEntry(EgoDriverNode, "ego_driver", warm_up=warm_ego)


def main(args: list[str] | None = None) -> int:
    return run_nodes([(ENTRY, [])], args)


if __name__ == "__main__":  # also runnable as python -m before its console script exists
    import sys

    sys.exit(main())
