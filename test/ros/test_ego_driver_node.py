"""The ego driver node drives the real dynamics node through the city on simulation time."""
from __future__ import annotations

import itertools
import math

from rosgraph_msgs.msg import Clock
from vehicle_sim.msg import LockstepAck, VehicleControl, VehicleState

from vehicle_sim.nodes import conversions as conv
from vehicle_sim.nodes import qos
from vehicle_sim.paths import config_path


class LockstepTester:
    """The test as a lockstep peer of the dynamics node: it acknowledges a /clock tick only once
    it holds the vehicle state of that time and, at control ticks, the ego's command of that
    time. The run cannot outpace the test, so it loses nothing however busy the host is (the
    protocol's guarantee, not a delivery count)."""

    def __init__(self, node, control_period_ns: int):
        self.states: list[VehicleState] = []
        self.commands: dict[int, VehicleControl] = {}  # by stamp: a stall resend repeats one
        self.ticks: list[int] = []
        self.acked = -1
        self.period_ns = control_period_ns
        self.ack = node.create_publisher(LockstepAck, "/sim/lockstep_ack", qos.LOCKSTEP_ACK)
        node.create_subscription(VehicleState, "vehicle/state", self._on_state, qos.STATE)
        node.create_subscription(VehicleControl, "autonomy/control", self._on_command,
                                 qos.COMMAND)
        node.create_subscription(Clock, "/clock", self._on_clock, qos.RELIABLE_STREAM)

    def _on_state(self, msg: VehicleState) -> None:
        self.states.append(msg)
        self._pump()

    def _on_command(self, msg: VehicleControl) -> None:
        self.commands[conv.to_ns(msg.header.stamp)] = msg
        self._pump()

    def _on_clock(self, msg: Clock) -> None:
        t_ns = conv.to_ns(msg.clock)
        if t_ns > self.acked and t_ns not in self.ticks:
            self.ticks.append(t_ns)
        self._pump()

    def _pump(self) -> None:
        newest_state = conv.to_ns(self.states[-1].header.stamp) if self.states else -1
        while self.ticks:
            t_ns = self.ticks[0]
            if newest_state < t_ns or (t_ns % self.period_ns == 0 and t_ns not in self.commands):
                return
            self.ticks.pop(0)
            self.acked = t_ns
            msg = LockstepAck(node="tester", stamp=conv.stamp(t_ns))
            self.ack.publish(msg)


def test_autopilot_drives_the_dynamics_node_along_the_lane(ros_node, start_node):
    period_ns = 20_000_000  # the ego's 50 Hz control rate (ego_driver.yaml)
    tester = LockstepTester(ros_node, period_ns)
    # the ego starts at the dynamics node's default pose (0, 0, 0), in the corner junction off
    # the lanes: the autopilot picks lane h0_0_f0 (from (9, -1.75) heading east) and joins it
    start_node("ego_driver_node", params={"use_sim_time": True, "lockstep": True},
               params_file=str(config_path("ego_driver.yaml")))
    start_node("dynamics_node", params={"mode": "lockstep", "lockstep_frame_steps": 20,
                                        "lockstep_peers": "['ego_driver', 'tester']"},
               remappings=("vehicle/control:=autonomy/control",))
    ros_node.spin_until(lambda: tester.acked >= 30e9, timeout_s=120.0,
                        what="30 s of simulation in lockstep")
    by_stamp = {conv.to_ns(s.header.stamp): s for s in tester.states}  # a stall resends one
    # every 100 Hz state arrived: the test held the run back until it had each one
    assert set(range(10**9, 30 * 10**9 + 1, 10_000_000)) <= set(by_stamp)
    states = [by_stamp[t] for t in sorted(by_stamp) if t <= 30e9]
    path = sum(math.hypot(b.pose.position.x - a.pose.position.x,
                          b.pose.position.y - a.pose.position.y)
               for a, b in itertools.pairwise(states))
    assert path > 50.0
    on_lane = [s for s in states if 9.5e9 < conv.to_ns(s.header.stamp) < 10.5e9]
    assert len(on_lane) == 99 and all(abs(s.pose.position.y + 1.75) < 0.5 for s in on_lane)
    assert all(s.pose.position.x > 20.0 for s in on_lane)
    assert all(abs(conv.rpy_from_quaternion(s.pose.orientation)[2]) < 0.1 for s in on_lane)
    # commands at exactly 50 Hz of simulation time, stamped with simulation time
    late = sorted(t for t in tester.commands if 10e9 <= t < 20e9)
    assert late == list(range(10_000_000_000, 20_000_000_000, period_ns))


def test_a_missing_map_refuses_to_start(start_node, tmp_path):
    proc = start_node("ego_driver_node", params={"map_file": "maps/no_such_map.yaml"})
    assert proc.proc.wait(timeout=30) == 2
    assert "no_such_map.yaml" in proc.stop()
