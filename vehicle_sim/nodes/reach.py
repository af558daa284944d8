"""Whether a node's publishers reach their readers, for the nodes that hold back their first
output until they do (the clock owner's start, a lockstep peer's join).

Reached means: each publisher of the node has matched, at the DDS level, at least one reader per
node the ROS graph shows reading its topic (counted by name, so a killed process's readers,
which stay in the graph until their lease ends, count once under the name of its respawned
successor). The graph learns of a reader from that reader's announcement; the match on this
side can come later, and a reliable writer keeps for a reader only what it wrote after
matching it: what goes out before is lost to that reader (a fast run's first states to the
recorder, once in a clean-clone CI run).

The check is a lower bound, not a proof: rmw gives a publisher's matched count, not which
readers matched, so it compares that count with the number of reader *nodes*. A matched reader
of another node (a user's tool) can stand in for one not matched yet, and a node with two
readers of a topic (rclpy's time source and a lockstep peer on /clock) counts once.
"""
from __future__ import annotations

from rclpy.node import Node

NOT_DATA = ("/rosout", "/parameter_events")  # every node's; nobody has to read them


def has_reader(pub) -> bool:
    """A reader is matched to this publisher: a message is worth building (and sending)."""
    return pub.get_subscription_count() > 0


def unreached_topics(node: Node, among: set[str] | None = None) -> list[str]:
    """This node's topics whose publisher has matched fewer readers than the nodes the graph
    shows reading them (only the nodes named in ``among``, if given: the run's own nodes, so a
    user's tool with an incompatible QoS does not hold the run back)."""
    missing = []
    for pub in node.publishers:
        topic = pub.topic_name
        if topic in NOT_DATA:
            continue
        # by name, this node's own reader too: the matched count includes it
        readers = {info.node_name for info in node.get_subscriptions_info_by_topic(topic)}
        if among is not None:
            readers &= among
        if pub.get_subscription_count() < len(readers):
            missing.append(topic)
    return missing
