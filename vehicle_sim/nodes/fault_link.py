"""The node side of fault injection: one link per fault target, the same for every node.

A :class:`FaultLink` subscribes ``faults/command``, keeps the commands of its ``target`` (others
belong to other nodes), converts each message once into a core ``FaultRequest`` (kind = the
FaultCommand constant's name in lower case), keeps the target's active faults in a core
``FaultBook`` (core.faults: ids, duration 0 = until cleared, CLEAR id 0 = all, a reused id
replaces) and answers on ``faults/status``: ACTIVE, CLEARED (by CLEAR or when the duration of
simulation time elapsed) or REJECTED with the reason, stamped with the simulation time of the
change, and logged. A new target is ``FaultLink(node, target, check)``: ``check(request,
other_active)`` says why the target cannot take a request (use ``not_applicable`` for the kinds
it does not know), and ``on_change(active)`` applies the active faults after every change.
(The vehicle's faults change between physics steps: :class:`StatusLink` with the book in the
physics loop, see vehicle_faults.py.)
A command whose ``at`` lies ahead of the node's simulation time (a scenario's schedule,
core/fault_schedule.py) is held and applied at the node's first step with t >= at.
"""
from __future__ import annotations

import math
from collections.abc import Callable

from rclpy.node import Node
from std_msgs.msg import String

from vehicle_sim.core.fault_schedule import PendingFaults
from vehicle_sim.core.faults import (
    ACTIVE,
    CLEARED,
    MAX_DURATION_S,
    REJECTED,
    ActiveFault,
    Check,
    FaultBook,
    FaultChange,
    FaultRequest,
    text_problem,
)
from vehicle_sim.msg import FaultCommand, FaultStatus
from vehicle_sim.nodes import qos
from vehicle_sim.nodes.conversions import stamp
from vehicle_sim.nodes.warning_gate import WarningGate

KIND_OF = {getattr(FaultCommand, n): n.lower() for n in dir(FaultCommand)
           if n.isupper() and isinstance(getattr(FaultCommand, n), int)}
CODE_OF = {kind: code for code, kind in KIND_OF.items()}
STATE_OF = {ACTIVE: FaultStatus.STATE_ACTIVE, CLEARED: FaultStatus.STATE_CLEARED,
            REJECTED: FaultStatus.STATE_REJECTED}
TARGETS_TOPIC = "faults/targets"  # each target's link announces its target (nodes.fault_desk)


def announce(node: Node, target: str):
    """Say that ``node`` owns ``target`` (kept by DDS for the desk that starts later); returns
    the publisher, which must live as long as the target."""
    pub = node.create_publisher(String, TARGETS_TOPIC, qos.LATCHED)
    pub.publish(String(data=target))
    return pub


def publish_status(node: Node, pub, t_ns: int, target: str, change: FaultChange,
                   code: int, warnings: WarningGate) -> None:
    """One change on faults/status, stamped ``t_ns``, and its log line (``code``: the
    FaultCommand code of the change's kind); a rejection's line once a second per target and
    kind of problem (``warnings``: a flood of bad commands is one line; each answer goes out)."""
    out = FaultStatus(id=change.id, target=target, fault=code, state=STATE_OF[change.state],
                      message=change.message)
    out.header.stamp = stamp(t_ns)
    pub.publish(out)
    # separate call sites: rclpy refuses a severity change at one call site
    if change.state == REJECTED:
        if warnings.due(target, change.message):
            node.get_logger().warning(f"{target} fault id {change.id} rejected: "
                                      f"{change.message}")
    else:
        node.get_logger().info(f"{target} fault id {change.id}: {change.message} "
                               f"(t={t_ns * 1e-9:.3f} s)")


def at_problem(at_s: float, now_ns: int) -> str | None:
    """Why a command's ``at`` [s] cannot be taken at sim time now_ns, else None."""
    if not math.isfinite(at_s) or at_s < 0.0 or at_s * 1e9 > now_ns + MAX_DURATION_S * 1e9:
        return (f"at must be finite, >= 0 and at most {MAX_DURATION_S:g} s ahead of the "
                f"simulation time, got {at_s}")
    return None


def to_request(cmd: FaultCommand) -> FaultRequest:
    v = cmd.vector
    return FaultRequest(cmd.id, KIND_OF.get(cmd.fault, f"fault {cmd.fault}"), cmd.channel,
                        cmd.value, cmd.duration, (v.x, v.y, v.z))


class StatusLink:
    """faults/command of one target in, faults/status out. ``command(request)`` answers a
    request of the target (subclasses); ``report`` publishes and logs changes."""

    def __init__(self, node: Node, target: str, now_ns: Callable[[], int]):
        self.node, self.target, self.now_ns = node, target, now_ns
        self.pending = PendingFaults()
        self.warnings = WarningGate()
        self._released_ns = 0
        self.pub = node.create_publisher(FaultStatus, "faults/status", qos.FAULT_STATUS)
        node.create_subscription(FaultCommand, "faults/command", self._on_command,
                                 qos.FAULT_COMMAND)
        self._announced = announce(node, target)  # for the fault desk (nodes.fault_desk)

    def command(self, req: FaultRequest) -> list[FaultChange]:
        raise NotImplementedError

    def report(self, t_ns: int, changes: list[FaultChange], code: int = 0) -> None:
        """Publish each change stamped ``t_ns`` and log it (``code``: the FaultCommand code of
        a kind that has none, an unknown one)."""
        for c in changes:
            publish_status(self.node, self.pub, t_ns, self.target, c, CODE_OF.get(c.kind, code),
                           self.warnings)

    def take(self, req: FaultRequest, at_ns: int) -> list[FaultChange]:
        """Apply ``req`` now, or hold it until ``at_ns`` (released by ``release``)."""
        if at_ns <= self.now_ns():
            return self.command(req)
        problem = self.pending.hold(req, at_ns)
        if problem is not None:
            return [FaultChange(req.id, req.kind, REJECTED, problem)]
        self.node.get_logger().info(f"{self.target} fault id {req.id} held until "
                                    f"t={at_ns * 1e-9:.3f} s")
        return []

    def release(self, t_ns: int) -> None:
        """Simulation time is ``t_ns``: apply the held commands that are due."""
        if t_ns < self._released_ns:  # sim time went back (a new run): nothing held is due
            self.pending.clear()
        self._released_ns = t_ns
        for req in self.pending.due(t_ns) if len(self.pending) else ():
            self.report(t_ns, self.command(req), code=CODE_OF.get(req.kind, 0))

    def _on_command(self, cmd: FaultCommand) -> None:
        if cmd.target != self.target:
            return
        req, now_ns = to_request(cmd), self.now_ns()
        problem = text_problem(req) or at_problem(cmd.at, now_ns)  # never held or forwarded
        changes = ([FaultChange(req.id, req.kind, REJECTED, problem)] if problem
                   else self.take(req, round(cmd.at * 1e9)))
        self.report(now_ns, changes, code=cmd.fault)


class FaultLink(StatusLink):
    """A target whose faults the node itself keeps: the core FaultBook on this node's thread.

    ``now_ns()`` is the node's simulation time; call ``expire(t_ns)`` when it advances."""

    def __init__(self, node: Node, target: str, check: Check, *,
                 now_ns: Callable[[], int] = lambda: 0,
                 on_change: Callable[[list[ActiveFault]], None] = lambda active: None):
        super().__init__(node, target, now_ns)
        self.book = FaultBook(target, check)
        self.on_change = on_change

    @property
    def active(self) -> list[ActiveFault]:
        return list(self.book.active.values())

    def command(self, req: FaultRequest) -> list[FaultChange]:
        return self._changed(self.book.command(req, self.now_ns()))

    def expire(self, t_ns: int) -> None:
        """Simulation time is ``t_ns``: apply held commands that are due, report the faults
        whose duration elapsed."""
        self.release(t_ns)
        if self.book.active:
            self.report(t_ns, self._changed(self.book.expire(t_ns)))

    def _changed(self, changes: list[FaultChange]) -> list[FaultChange]:
        if changes:
            self.on_change(self.active)
        return changes
