"""FaultCommand bookkeeping shared by the nodes that own fault targets (sensors, bridge).

A :class:`FaultBook` keeps one entry per command id, expiring ``duration`` seconds of simulation
time after it began (0 = until cleared; a command reusing an active id replaces that fault);
``publish_changes`` answers on ``faults/status``: ACTIVE, CLEARED (by CLEAR or when the duration
elapsed) or REJECTED with the reason, stamped with the simulation time of the change. (The
dynamics node's vehicle faults live in core.vehicle.faults: they change between physics steps.)
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from rclpy.node import Node

from vehicle_sim.msg import FaultCommand, FaultStatus
from vehicle_sim.nodes.conversions import stamp

FAULT_NAMES = {getattr(FaultCommand, n): n for n in dir(FaultCommand)
               if n.isupper() and isinstance(getattr(FaultCommand, n), int)}


@dataclass
class ActiveFault:
    id: int
    fault: int
    channel: str
    value: float
    vector: tuple[float, float, float]
    until_s: float  # sim time it expires [s]; inf = until cleared


Change = tuple[int, int, int, str]  # (id, fault, FaultStatus state, message)


class FaultBook:
    """Active faults of one target (a sensor, the platform link, the wheel link).

    ``check(cmd)`` returns why the command cannot apply to this target, or None."""

    def __init__(self, target: str, check: Callable[[FaultCommand], str | None]):
        self.target, self._check = target, check
        self.active: dict[int, ActiveFault] = {}

    def command(self, cmd: FaultCommand, now_s: float) -> list[Change]:
        name = FAULT_NAMES.get(cmd.fault, f"fault {cmd.fault}")
        if cmd.fault == FaultCommand.CLEAR:
            return self._clear(cmd.id)
        problem = self._check(cmd)
        if problem is None and not (math.isfinite(cmd.duration) and cmd.duration >= 0.0):
            problem = f"duration must be finite and >= 0 s, got {cmd.duration}"
        if problem is not None:
            return [(cmd.id, cmd.fault, FaultStatus.STATE_REJECTED, f"{name}: {problem}")]
        until = now_s + cmd.duration if cmd.duration > 0.0 else math.inf
        v = cmd.vector
        self.active[cmd.id] = ActiveFault(cmd.id, cmd.fault, cmd.channel, cmd.value,
                                          (v.x, v.y, v.z), until)
        left = "until cleared" if math.isinf(until) else f"until t={until:.3f} s"
        return [(cmd.id, cmd.fault, FaultStatus.STATE_ACTIVE, f"{name} active {left}")]

    def expire(self, now_s: float) -> list[Change]:
        done = [f for f in self.active.values() if now_s >= f.until_s - 1e-9]
        for f in done:
            del self.active[f.id]
        return [(f.id, f.fault, FaultStatus.STATE_CLEARED, "duration elapsed") for f in done]

    def _clear(self, fault_id: int) -> list[Change]:
        if fault_id == 0:
            gone, self.active = list(self.active.values()), {}
        elif fault_id in self.active:
            gone = [self.active.pop(fault_id)]
        else:
            return [(fault_id, FaultCommand.CLEAR, FaultStatus.STATE_REJECTED,
                     f"CLEAR: no active {self.target} fault with id {fault_id}")]
        if not gone:
            return [(0, FaultCommand.CLEAR, FaultStatus.STATE_CLEARED, "no active fault")]
        return [(f.id, f.fault, FaultStatus.STATE_CLEARED, "cleared") for f in gone]


def not_applicable(target: str, accepted: tuple[int, ...]) -> str:
    names = ", ".join(FAULT_NAMES[a] for a in accepted)
    return f"not applicable to {target} (accepted: {names}, CLEAR)"


def publish_changes(node: Node, pub, target: str, t_ns: int, changes: list[Change]) -> None:
    """Publish each change on ``pub`` (faults/status) stamped ``t_ns`` and log it."""
    for fault_id, fault, state, message in changes:
        out = FaultStatus(id=fault_id, target=target, fault=fault, state=state, message=message)
        out.header.stamp = stamp(t_ns)
        pub.publish(out)
        # separate call sites: rclpy refuses a severity change at one call site
        if state == FaultStatus.STATE_REJECTED:
            node.get_logger().warning(f"{target} fault id {fault_id} rejected: {message}")
        else:
            node.get_logger().info(f"{target} fault id {fault_id}: {message} "
                                   f"(t={t_ns * 1e-9:.3f} s)")
