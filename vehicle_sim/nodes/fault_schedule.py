"""Publishes a scenario's schedule of faults and instructor actions (core/fault_schedule.py).

Each entry goes out on ``faults/command`` ``PUBLISH_LEAD_S`` of simulation time before it is due,
with ``at`` set, so the node owning its target applies it at its own first step with t >= at.
The fault names were checked against FaultCommand's constants when the node started. A node
whose clock first reads later than ``LATE_S`` (a respawn) skips the entries it would have sent by
then whose time is gone (at <= now): its previous life sent them, or they are late. The
entries not yet due go out (a first life that read the clock late: fast mode on a loaded host),
also after a respawn, whose previous life may have sent them: the target applies the same id at
the same time again, the second replacing the first.
"""
from __future__ import annotations

from rclpy.node import Node

from vehicle_sim.core.config import ConfigError
from vehicle_sim.core.fault_schedule import PUBLISH_LEAD_S, ScheduledFault, publish_order
from vehicle_sim.msg import FaultCommand
from vehicle_sim.nodes import qos
from vehicle_sim.nodes.conversions import stamp

CHECK_PERIOD_S = 0.1  # sim time between looks at the schedule (<< PUBLISH_LEAD_S)
LATE_S = 1.0  # a first clock reading later than this: a restart (a start reads ~CHECK_PERIOD_S)


def command_of(entry: ScheduledFault) -> FaultCommand:
    cmd = FaultCommand(id=entry.id, target=entry.target, fault=getattr(FaultCommand, entry.fault),
                       channel=entry.channel, value=entry.value, duration=entry.duration_s,
                       at=entry.at_s)
    cmd.vector.x, cmd.vector.y, cmd.vector.z = entry.vector
    return cmd


def check_names(entries: tuple[ScheduledFault, ...], source: str) -> None:
    """ConfigError naming the first entry whose fault is not a FaultCommand constant."""
    for i, e in enumerate(entries):
        if not isinstance(getattr(FaultCommand, e.fault, None), int):
            raise ConfigError(source, f"schedule[{i}].fault", f"unknown fault {e.fault!r}")


class SchedulePublisher:
    """Sends the entries of ``entries`` ahead of their time, on the node's sim-time clock."""

    def __init__(self, node: Node, entries: tuple[ScheduledFault, ...]):
        self.node, self._left = node, publish_order(entries)
        self.pub = node.create_publisher(FaultCommand, "faults/command", qos.FAULT_COMMAND)
        self.sent, self._started = 0, False
        if self._left:
            node.create_timer(CHECK_PERIOD_S, self._tick)
            node.get_logger().info(f"schedule: {len(self._left)} faults and instructor actions")

    def _tick(self) -> None:
        now_ns = self.node.get_clock().now().nanoseconds
        if now_ns <= 0:  # the clock has not started
            return
        if not self._started:
            self._started = True
            late = now_ns > round(LATE_S * 1e9)
            past = [e for e in self._left if e.at_ns <= now_ns] if late else []
            if past:  # their time is gone: sent by this node's previous life, or late
                self._left = self._left[len(past):]  # (in time order: a prefix)
                self.node.get_logger().warning(
                    f"schedule: {len(past)} entries due before t={now_ns * 1e-9:.3f} s, the "
                    "first clock reading, skipped (a restart, or a start that late)")
        lead_ns = round(PUBLISH_LEAD_S * 1e9)
        while self._left and self._left[0].at_ns - lead_ns <= now_ns:
            entry = self._left.pop(0)
            cmd = command_of(entry)
            cmd.header.stamp = stamp(now_ns)
            self.pub.publish(cmd)
            self.sent += 1
            self.node.get_logger().info(f"schedule: {entry.fault} id {entry.id} for "
                                        f"{entry.target} at t={entry.at_s:.3f} s sent")
