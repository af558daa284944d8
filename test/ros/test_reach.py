"""nodes.reach over real DDS: a topic counts as reached once its publisher has matched a reader
of every node the graph shows reading it; a reader that cannot match (an incompatible QoS)
keeps it unreached, unless that node is not among the ones waited for."""
from __future__ import annotations

import os
import time

import pytest

rclpy = pytest.importorskip("rclpy")

from rclpy.qos import QoSProfile, ReliabilityPolicy  # noqa: E402
from std_msgs.msg import Empty  # noqa: E402

from vehicle_sim.nodes.reach import unreached_topics  # noqa: E402


def test_a_reader_the_graph_shows_but_the_publisher_has_not_matched_is_unreached():
    tag = os.getpid()
    ok, lossy = f"/reach_{tag}_reliable", f"/reach_{tag}_best_effort"
    contexts = [rclpy.Context(), rclpy.Context()]  # two participants: matching over DDS
    for context in contexts:
        rclpy.init(context=context)
    try:
        writer = rclpy.create_node(f"reach_writer_{tag}", context=contexts[0])
        reader = rclpy.create_node(f"reach_reader_{tag}", context=contexts[1])
        best_effort = QoSProfile(depth=1, reliability=ReliabilityPolicy.BEST_EFFORT)
        reliable = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE)
        writer.create_publisher(Empty, ok, reliable)
        writer.create_publisher(Empty, lossy, best_effort)
        assert unreached_topics(writer) == []  # nobody reads them yet
        # a reliable reader of a best-effort writer: in the graph, never matched
        for topic in (ok, lossy):
            reader.create_subscription(Empty, topic, lambda _: None, reliable)
        deadline = time.monotonic() + 20.0
        while time.monotonic() < deadline and not (
                writer.count_subscribers(lossy) == 1 and unreached_topics(writer) == [lossy]):
            time.sleep(0.05)
        assert writer.count_subscribers(lossy) == 1, "the graph never showed the reader"
        assert unreached_topics(writer) == [lossy]
        time.sleep(0.5)
        assert unreached_topics(writer) == [lossy], "an incompatible reader matched"
        # the readers that count: only the run's own nodes, when named
        assert unreached_topics(writer, among={writer.get_name()}) == []
        assert unreached_topics(writer, among={reader.get_name()}) == [lossy]
    finally:
        for context in contexts:
            rclpy.shutdown(context=context)
