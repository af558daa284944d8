"""A node's side of lockstep (paper 003's heartbeat), shared by the traffic and ego driver nodes.

Every /clock tick becomes a frame, processed once the node's inputs for it are in
(core.realtime.FrameQueue: ``ready(t_ns)``), then acknowledged on /sim/lockstep_ack with the
stamps ``process(t_ns)`` returns: its newest data output and its newest vehicle command (0 =
none), which readers and the dynamics node wait for. A tick that comes again means the run is
stuck, maybe on a message that a reader which matched late has lost: ``resend()`` publishes the
node's latest outputs again and the last ack goes out again, both unchanged.
"""
from __future__ import annotations

from collections.abc import Callable

from rclpy.node import Node
from rosgraph_msgs.msg import Clock

from vehicle_sim.core.realtime import FrameQueue
from vehicle_sim.msg import LockstepAck
from vehicle_sim.nodes import conversions as conv
from vehicle_sim.nodes import qos


class LockstepPeer:
    def __init__(self, node: Node, ready: Callable[[int], bool],
                 process: Callable[[int], tuple[int, int]], resend: Callable[[], None]):
        self._name, self._process, self._resend = node.get_name(), process, resend
        self._frames = FrameQueue(ready, self._frame)
        self._ack: LockstepAck | None = None
        self._pub = node.create_publisher(LockstepAck, "/sim/lockstep_ack", qos.LOCKSTEP_ACK)
        node.create_subscription(Clock, "/clock", self._on_clock, qos.RELIABLE_STREAM)

    def pump(self) -> None:
        """Process the frames whose inputs are now in (call after every input arrival)."""
        self._frames.pump()

    def _on_clock(self, msg: Clock) -> None:
        if self._frames.tick(conv.to_ns(msg.clock)) or self._ack is None:
            return
        self._resend()
        self._pub.publish(self._ack)

    def _frame(self, t_ns: int) -> None:
        output_ns, command_ns = self._process(t_ns)
        self._ack = LockstepAck(node=self._name, stamp=conv.stamp(t_ns),
                                output_stamp=conv.stamp(output_ns),
                                command_stamp=conv.stamp(command_ns))
        self._pub.publish(self._ack)
