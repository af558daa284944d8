"""FaultCommand LINK_LOSS for the bridge's targets "platform" and "wheel".

An injected link loss behaves as if the cable were pulled, so a rig's own safety can be tested
from a scenario:
- platform: no frame leaves the PC (UDP or serial) while the fault is active; the rig
  controller must park on its receive watchdog. When the fault ends the output resumes from
  neutral with the safety layer's soft start (core.motion.safety), as after a serial port
  came back;
- wheel: rig input packets and evdev events are ignored; after the preset's
  ``inputs.input_timeout_s`` the driver's input is stale, as for a real loss: driver throttle 0,
  force feedback 0, no driver command.
Durations count simulation time: the stamps of the vehicle states the bridge receives.
"""
from __future__ import annotations

from functools import partial

from rclpy.node import Node

from vehicle_sim.core.faults import ActiveFault, FaultRequest, not_applicable
from vehicle_sim.nodes.fault_link import FaultLink

TARGETS = ("platform", "wheel")


def _check(req: FaultRequest, others: list[ActiveFault], target: str) -> str | None:
    if req.kind != "link_loss":
        return not_applicable(target, ("link_loss",))
    if req.channel:
        return f"takes no channel, got {req.channel!r}"
    return None


class BridgeFaults:
    """Fault links of the platform and wheel targets; ``lost(target)`` says if one is cut."""

    def __init__(self, node: Node):
        self.now_ns = 0  # sim time of the newest vehicle state
        self.links = {t: FaultLink(node, t, partial(_check, target=t), now_ns=lambda: self.now_ns)
                      for t in TARGETS}

    def lost(self, target: str) -> bool:
        return bool(self.links[target].book.active)

    def on_time(self, now_ns: int) -> None:
        """Advance sim time [ns] (each vehicle state): faults whose duration elapsed end."""
        self.now_ns = now_ns
        for link in self.links.values():
            link.expire(self.now_ns)
