"""A node's side of lockstep (paper 003's heartbeat), shared by the lockstep peers (traffic, ego
driver, sensors, recorder).

Every /clock tick becomes a frame, processed once the node's inputs for it are in
(core.realtime.FrameQueue: ``ready(t_ns)``), then acknowledged on /sim/lockstep_ack with the
stamps ``process(t_ns)`` returns: its newest data output and its newest vehicle command (0 =
none), which readers and the dynamics node wait for. A tick that comes again means the run is
stuck, maybe on a message that a reader which matched late has lost: ``resend()`` publishes the
node's latest outputs again and the last ack goes out again, both unchanged.

Joining: the first frame waits until the node's publishers reach their readers, so that what it
publishes from then on is received (recorded) in full, also after a respawn in mid-run, when
the run goes on as soon as this node acknowledges. Joined means: every node named in the
parameter ``lockstep_graph`` (the run's other nodes, set by vehicle_sim.graph) is in the ROS
graph, and this node's publishers reach their readers (nodes.reach). A node that publishes
before its first frame (a sensor models every state) holds that back until it has joined
(``joined``). A reader node that is down keeps that from happening: JOIN_WAIT_S after its first
frame came, the node joins anyway, with one warning naming what it did not reach.
"""
from __future__ import annotations

import time
from collections.abc import Callable

from rcl_interfaces.msg import ParameterDescriptor, ParameterType
from rclpy.clock import Clock as RosClock
from rclpy.clock import ClockType
from rclpy.node import Node
from rosgraph_msgs.msg import Clock

from vehicle_sim.core.realtime import FrameQueue
from vehicle_sim.msg import LockstepAck
from vehicle_sim.nodes import conversions as conv
from vehicle_sim.nodes import qos
from vehicle_sim.nodes.reach import unreached_topics

JOIN_WAIT_S = 5.0  # wall time a peer waits for its readers before its first frame
GRAPH_PARAM = "lockstep_graph"  # declared here: only lockstep peers get it (graph.py)


class LockstepPeer:
    def __init__(self, node: Node, ready: Callable[[int], bool],
                 process: Callable[[int], tuple[int, int]], resend: Callable[[], None]):
        self._node = node
        self._name, self._process, self._resend = node.get_name(), process, resend
        given = node._parameter_overrides.get(GRAPH_PARAM)  # as params.declare_and_load does
        self._graph = set(node.declare_parameter(
            GRAPH_PARAM, given.value if given is not None else [], ParameterDescriptor(
                type=ParameterType.PARAMETER_STRING_ARRAY, read_only=True,
                description="lockstep: the run's other nodes, whose readers this node's "
                            "publishers reach before its first frame")).value) - {self._name}
        self._joining, self._join_by = True, 0.0  # deadline set by the first frame's wait
        self._join_timer = node.create_timer(0.05, self.pump,
                                             clock=RosClock(clock_type=ClockType.STEADY_TIME))
        self._frames = FrameQueue(lambda t_ns: self._joined() and ready(t_ns), self._frame)
        self._ack: LockstepAck | None = None
        self._pub = node.create_publisher(LockstepAck, "/sim/lockstep_ack", qos.LOCKSTEP_ACK)
        node.create_subscription(Clock, "/clock", self._on_clock, qos.clock(lockstep=True))

    @property
    def joined(self) -> bool:
        """The first frame's wait for the readers is over (see the module docstring)."""
        return not self._joining

    def pump(self) -> None:
        """Process the frames whose inputs are now in (call after every input arrival)."""
        self._frames.pump()

    def _joined(self) -> bool:
        if not self._joining:
            return True
        now = time.monotonic()
        self._join_by = self._join_by or now + JOIN_WAIT_S
        missing = self.unreached()
        if missing and now < self._join_by:
            return False
        if missing:
            self._node.get_logger().warning(f"lockstep: joining after {JOIN_WAIT_S:g} s without "
                                            f"reaching {', '.join(missing)}")
        self._joining = False
        self._node.destroy_timer(self._join_timer)
        return True

    def unreached(self) -> list[str]:
        """The run's nodes not in the graph yet, and this node's topics not matched by a reader
        of every node the graph shows reading them."""
        node = self._node
        missing = sorted(self._graph - set(node.get_node_names()))
        missing += [f"a reader of {topic}" for topic in unreached_topics(node)]
        return missing

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
