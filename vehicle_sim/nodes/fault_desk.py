"""The answer to a fault command for a target no node of the run owns (``bridge``, a typo, a
sensor the scenario does not start): without it such a command got no answer and no log line.

Every target's link (fault_link.StatusLink) announces its target on ``faults/targets``
(std_msgs/String, latched, one writer per target). The desk, in the dynamics node (the one node
every run has), collects them and answers a command whose target none announced: REJECTED on
faults/status, naming the targets there are, with one warning line. Announcements take a
discovery to arrive, so for the first ``GRACE_S`` of wall time after the desk starts it holds
such commands and decides at the end of it (a target that appeared meanwhile answers itself).
"""
from __future__ import annotations

import time

from rclpy.clock import Clock as RosClock
from rclpy.clock import ClockType
from rclpy.node import Node
from std_msgs.msg import String

from vehicle_sim.core.faults import MAX_TEXT_CHARS, REJECTED, FaultChange
from vehicle_sim.msg import FaultCommand, FaultStatus
from vehicle_sim.nodes import qos
from vehicle_sim.nodes.conversions import to_ns
from vehicle_sim.nodes.edge_recording import Edge, EdgeRecording
from vehicle_sim.nodes.fault_link import TARGETS_TOPIC, publish_status
from vehicle_sim.nodes.warning_gate import WarningGate

GRACE_S = 5.0  # [s] wall time for the targets' announcements (a choice: DDS discovery on
#                 loopback takes well under a second; a loaded host's node start a few)
MAX_TARGETS = 1000  # announcements beyond are ignored (bounded memory against a hostile node)
MAX_HELD = 1000  # commands held during the grace; beyond, rejected at once


def unknown_target(target: str, known: set[str], none: str = "none announced") -> str:
    """The rejection of a command for ``target``, which no node announced (``none``: what the
    line says when no node announced any)."""
    if len(target) > MAX_TEXT_CHARS:
        return f"target of {len(target)} characters (at most {MAX_TEXT_CHARS})"
    return (f"no node of this run takes target {target!r} (targets: "
            f"{', '.join(sorted(known)) or none})")


class FaultDesk:
    """The targets announced so far and the commands held during the grace (module doc).
    ``grace_s`` [s]: how long to hold; ``none``: the rejections' words when no target is
    announced (the lockstep engine's desk: it has no targets and holds nothing)."""

    def __init__(self, node: Node, now_ns, grace_s: float = GRACE_S,
                 none: str = "none announced", recording: EdgeRecording | None = None):
        self.node, self.now_ns, self.none = node, now_ns, none
        self.known: set[str] = set()
        self.held: list[FaultCommand] = []
        self._until = time.monotonic() + grace_s
        self.warnings = WarningGate()
        self.pub = _Answers(Edge(node.create_publisher(FaultStatus, "faults/status",
                                                       qos.FAULT_STATUS),
                                 recording, latched=True))
        node.create_subscription(String, TARGETS_TOPIC, self._on_target, qos.EVENT)
        node.create_subscription(FaultCommand, "faults/command", self._on_command,
                                 qos.FAULT_COMMAND)
        node.create_timer(1.0, self._sweep, clock=RosClock(clock_type=ClockType.STEADY_TIME))

    def _on_target(self, msg: String) -> None:
        if len(self.known) < MAX_TARGETS and len(msg.data) <= MAX_TEXT_CHARS:
            self.known.add(msg.data)

    def _on_command(self, cmd: FaultCommand) -> None:
        if cmd.target in self.known:
            return
        if time.monotonic() < self._until and len(self.held) < MAX_HELD:
            self.held.append(cmd)
        else:
            self._reject(cmd)

    def _sweep(self) -> None:
        if not self.held or time.monotonic() < self._until:
            return
        held, self.held = self.held, []
        for cmd in held:
            if cmd.target not in self.known:
                self._reject(cmd)

    def _reject(self, cmd: FaultCommand) -> None:
        why = unknown_target(cmd.target, self.known, self.none)
        change = FaultChange(cmd.id, "", REJECTED, why)
        publish_status(self.node, self.pub, self.now_ns(), cmd.target[:MAX_TEXT_CHARS], change,
                       cmd.fault, self.warnings)


class _Answers:
    """The desk's faults/status publisher as an edge (edge_recording.Edge): to its readers and,
    in the lockstep engine, to the engine's recording at the answer's stamp."""

    def __init__(self, edge: Edge):
        self.edge = edge

    def publish(self, msg: FaultStatus) -> None:
        self.edge.send(to_ns(msg.header.stamp), msg)
