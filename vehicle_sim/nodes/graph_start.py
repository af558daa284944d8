"""When the clock owner starts: once the run's other nodes are up and reading /clock.

The dynamics node starts its physics (and so /clock) once every node of ``wait_for_nodes`` is in
the ROS graph (so a bounded fast run does not finish before its subscribers exist; after
``start_timeout_s`` it starts without the missing ones, with one warning), then after
``start_settle_s`` and, with sim time, once each of them has a /clock reader known to this node:
on a loaded machine discovery can take longer than the settle time; and once this node's
publishers reach those nodes' readers (nodes.reach), so that a fast run is recorded from its
first state. Those last waits are bounded (CLOCK_MATCH_WAIT_S) in case a node runs without sim
time or a reader never matches (an incompatible QoS), and the /clock one leaves out the
``clockless`` nodes, which read no /clock by design (the bridge: graph.CLOCKLESS_EXECUTABLES).
The checks run on a steady-clock timer: with use_sim_time a ROS-time timer would wait for the
/clock that only the loop publishes.
"""
from __future__ import annotations

import time
from collections.abc import Callable

from rclpy.clock import Clock, ClockType
from rclpy.node import Node

from vehicle_sim.nodes.reach import unreached_topics

CLOCK_MATCH_WAIT_S = 15.0  # [s] wall time for the nodes' readers to match (a choice)


class GraphStart:
    def __init__(self, node: Node, wait_for_nodes: tuple[str, ...], start_timeout_s: float,
                 start_settle_s: float, on_start: Callable[[], None],
                 match_clock: bool | None = None, clockless: tuple[str, ...] = ()):
        self._node, self._names, self._on_start = node, set(wait_for_nodes), on_start
        self._readers = self._names - set(clockless)  # whose /clock readers to wait for
        # wait for their /clock readers: with sim time (None), or as asked (the engine, which
        # owns the clock without following it)
        self._match_clock = match_clock
        self._timeout_s, self._settle_s = start_timeout_s, start_settle_s
        self._waiting_since = time.monotonic()
        self._up_at = self._ready_at = None
        self._timer = node.create_timer(0.05, self._try,
                                        clock=Clock(clock_type=ClockType.STEADY_TIME))

    def _try(self) -> None:
        node, now = self._node, time.monotonic()
        if self._ready_at is None:
            missing = sorted(self._names - set(node.get_node_names()))
            waited = now - self._waiting_since
            if missing and waited < self._timeout_s:
                return
            if missing:
                node.get_logger().warning(f"starting without {', '.join(missing)} after "
                                          f"{waited:.0f} s")
            self._up_at, self._ready_at = now, now + self._settle_s
        follow = (node.get_parameter("use_sim_time").value if self._match_clock is None
                  else self._match_clock)
        unmatched = sorted(self._unmatched_readers()) if follow else []
        unreached = unreached_topics(node, self._names | {node.get_name()})
        matching = (unmatched or unreached) and now - self._up_at < CLOCK_MATCH_WAIT_S
        if now >= self._ready_at and not matching:
            if unmatched:
                node.get_logger().warning(f"starting without a /clock reader of "
                                          f"{', '.join(unmatched)} after {CLOCK_MATCH_WAIT_S:g} s")
            if unreached:
                node.get_logger().warning(f"starting before a reader of {', '.join(unreached)} "
                                          f"matched, after {CLOCK_MATCH_WAIT_S:g} s")
            node.destroy_timer(self._timer)
            self._on_start()

    def _unmatched_readers(self) -> set[str]:
        """The nodes whose /clock reader this node does not know yet."""
        readers = {info.node_name for info in self._node.get_subscriptions_info_by_topic("/clock")}
        return self._readers - readers
