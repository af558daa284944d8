"""A subscription that takes the message type its publishers use, among a few candidates.

ROS 2 carries one type per topic name and DDS matches a reader only to writers of its own type,
but some topics are published in either of two types by different tools: ``cmd_vel`` is a
geometry_msgs/Twist from teleop tools and Nav2 before Kilted, a TwistStamped from Nav2 with
``enable_stamped_cmd_vel`` (its default from Kilted on). Like ``ros2 topic echo`` and rosbag2,
the reader looks at the publishers in the ROS graph and subscribes with their type: it starts
with the first candidate, and every ``CHECK_PERIOD_S`` of wall time (steady clock: also while
a simulation is paused) it changes to another candidate that the topic's publishers use while
none of them uses the current one (in two checks where the executor frees the old reader only
after the check's callback: rclpy's EventsExecutor). Publishers of two candidates at once: the
current one stays, with one warning per change of what is published.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

from rclpy._rclpy_pybind11 import RCLError
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rclpy.qos import QoSProfile

CHECK_PERIOD_S = 0.5  # a choice: a stack's first commands wait at most two of these


def type_name(msg_type: type) -> str:
    """'geometry_msgs/msg/Twist' for geometry_msgs.msg.Twist (the graph's spelling)."""
    return f"{msg_type.__module__.split('.')[0]}/msg/{msg_type.__name__}"


class TypeFollowingSubscription:
    def __init__(self, node: Node, candidates: Sequence[type], topic: str,
                 callback: Callable[[object], None], profile: QoSProfile):
        self._node, self._topic, self._callback, self._profile = node, topic, callback, profile
        self._types = {type_name(t): t for t in candidates}
        self._seen: frozenset[str] = frozenset()
        self._failures = 0  # subscribe attempts failed in a row
        self.msg_type = candidates[0]
        self._sub = node.create_subscription(self.msg_type, topic, callback, profile)
        self.topic_name = self._sub.topic_name  # fully qualified
        node.create_timer(CHECK_PERIOD_S, self.follow,
                          clock=Clock(clock_type=ClockType.STEADY_TIME))

    def follow(self) -> None:
        """Subscribe with the candidate type the publishers use, if not the current one."""
        published = frozenset(info.topic_type for info in
                              self._node.get_publishers_info_by_topic(self.topic_name))
        ours = published & self._types.keys()
        current = type_name(self.msg_type)
        changed, self._seen = published != self._seen, published
        if self._sub is not None and (not ours or current in ours):
            if changed and len(ours) > 1:
                self._node.get_logger().warning(
                    f"{self.topic_name} is published as {' and '.join(sorted(ours))}: reading "
                    f"{current} only")
            return
        if self._sub is not None:
            self._node.destroy_subscription(self._sub)
            self._sub = None
        if ours:
            self.msg_type = self._types[min(ours)]
        self._subscribe()

    def _subscribe(self) -> None:
        """The reader of ``msg_type``; retried at the next check while the old reader is still
        there (rclpy's EventsExecutor frees a destroyed reader after the running callback, and
        one process cannot hold readers of two types on one topic), with one warning per run
        of failures (e.g. another node of the process reads the topic in the other type)."""
        try:
            self._sub = self._node.create_subscription(self.msg_type, self._topic,
                                                       self._callback, self._profile)
        except RCLError as exc:
            self._failures += 1
            if self._failures == 2:  # the first one is the executor's late clean-up
                self._node.get_logger().warning(
                    f"{self.topic_name}: cannot read it as {type_name(self.msg_type)} yet "
                    f"({str(exc).split(', at ')[0]}); retrying every {CHECK_PERIOD_S:g} s")
            return
        self._failures = 0
        self._node.get_logger().info(f"{self.topic_name}: reading {type_name(self.msg_type)}, "
                                     f"the type its publishers use")
