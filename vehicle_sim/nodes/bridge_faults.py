"""FaultCommand LINK_LOSS for the bridge's targets "platform" and "wheel".

An injected link loss behaves as if the cable were pulled, so a rig's own safety can be tested
from a scenario:
- platform: no frame leaves the PC (UDP or serial) while the fault is active; the rig
  controller must park on its receive watchdog. The cueing keeps running, so frames resume at
  the current pose when the fault ends (the controller's soft start handles the jump);
- wheel: rig input packets and evdev events are ignored; after the preset's
  ``inputs.input_timeout_s`` the driver's input is stale, as for a real loss: driver throttle 0,
  force feedback 0, no driver command.
Durations count simulation time: the stamps of the vehicle states the bridge receives.
"""
from __future__ import annotations

from rclpy.node import Node

from vehicle_sim.msg import FaultCommand, FaultStatus
from vehicle_sim.nodes import qos
from vehicle_sim.nodes.fault_book import FaultBook, not_applicable, publish_changes

TARGETS = ("platform", "wheel")


def _check(cmd: FaultCommand) -> str | None:
    if cmd.fault != FaultCommand.LINK_LOSS:
        return not_applicable(cmd.target, (FaultCommand.LINK_LOSS,))
    if cmd.channel:
        return f"takes no channel, got {cmd.channel!r}"
    return None


class BridgeFaults:
    """Fault books of the platform and wheel links; ``lost(target)`` says if one is cut."""

    def __init__(self, node: Node):
        self.node = node
        self.books = {t: FaultBook(t, _check) for t in TARGETS}
        self.now_s = 0.0  # sim time of the newest vehicle state
        self.pub = node.create_publisher(FaultStatus, "faults/status", qos.EVENT)
        node.create_subscription(FaultCommand, "faults/command", self._on_command,
                                 qos.FAULT_COMMAND)

    def lost(self, target: str) -> bool:
        return bool(self.books[target].active)

    def on_time(self, now_s: float) -> None:
        """Advance sim time (each vehicle state): faults whose duration elapsed end."""
        self.now_s = now_s
        for target, book in self.books.items():
            if book.active:
                self._report(target, book.expire(now_s))

    def _on_command(self, cmd: FaultCommand) -> None:
        book = self.books.get(cmd.target)
        if book is not None:
            self._report(cmd.target, book.command(cmd, self.now_s))

    def _report(self, target: str, changes: list) -> None:
        if changes:
            publish_changes(self.node, self.pub, target, round(self.now_s * 1e9), changes)
