"""QoS of the sensor and state outputs over real DDS: imu/data reaches a subscriber with the
default (reliable) QoS, as Autoware's imu_corrector subscribes (REP-2003), and the standard
per-topic override parameter changes what a publisher offers."""
from __future__ import annotations

import dataclasses

import pytest
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import Imu
from vehicle_sim.msg import VehicleState

from test.ros.test_sensor_nodes import Rig
from vehicle_sim.nodes import qos
from vehicle_sim.recording import INFINITE_NS

DEFAULT_QOS = QoSProfile(depth=10)  # rclcpp::QoS(10) / the system default: reliable, volatile


def offered(node, topic: str) -> list[ReliabilityPolicy]:
    return [i.qos_profile.reliability for i in node.get_publishers_info_by_topic(topic)]


def test_imu_reaches_a_default_qos_reliable_subscriber(ros_node, start_node):
    rig = Rig(ros_node)
    got: list[Imu] = []
    sub = ros_node.create_subscription(Imu, "imu/data", got.append, DEFAULT_QOS)
    try:
        start_node("imu_node")
        rig.wait_matched("/imu/data")
        assert offered(ros_node, "/imu/data") == [ReliabilityPolicy.RELIABLE]
        rig.feed_until(lambda: len(got) >= 3, "IMU samples at a default-QoS subscriber")
        assert got[-1].linear_acceleration.z > 9.0  # at rest, level: specific force +g
    finally:
        ros_node.destroy_subscription(sub)
        rig.close()


def test_qos_override_parameter_changes_the_offered_qos(ros_node, start_node):
    imu = start_node("imu_node", params={
        "qos_overrides./imu/data.publisher.reliability": "best_effort"})
    dyn = start_node("dynamics_node", params={
        "qos_overrides./odom.publisher.reliability": "best_effort",
        "qos_overrides./odom.publisher.depth": 3})
    ros_node.spin_until(lambda: offered(ros_node, "/imu/data") and offered(ros_node, "/odom"),
                        what="imu/data and odom publishers")
    assert offered(ros_node, "/imu/data") == [ReliabilityPolicy.BEST_EFFORT]
    assert offered(ros_node, "/odom") == [ReliabilityPolicy.BEST_EFFORT]
    # vehicle/state keeps its default; both nodes still run
    assert offered(ros_node, "/vehicle/state") == [ReliabilityPolicy.RELIABLE]
    assert imu.proc.poll() is None and dyn.proc.poll() is None


def test_the_recorder_reads_the_sensor_outputs_as_they_are_offered(ros_node, start_node,
                                                                   tmp_path):
    """The recorder subscribes to its known topics before their publishers appear, with the QoS
    it expects them to offer: for imu/data and gnss/fix that is the sensors' reliable one, so a
    recording (and a lockstep run's) keeps every sample instead of reading them best effort."""
    start_node("recorder_node", params={"record_dir": str(tmp_path)})
    start_node("imu_node")
    start_node("gps_node")

    def reader(topic: str):
        return [i.qos_profile.reliability for i in ros_node.get_subscriptions_info_by_topic(topic)
                if i.node_name == "recorder"]

    for topic in ("/imu/data", "/gnss/fix"):
        ros_node.spin_until(lambda t=topic: reader(t) and offered(ros_node, t),
                            what=f"the recorder and the publisher of {topic}")
        assert reader(topic) == offered(ros_node, topic) == [ReliabilityPolicy.RELIABLE]


@pytest.mark.parametrize("role", ["STREAM", "STATE", "LATCHED", "EVENT", "LARGE_STREAM"])
def test_a_recording_says_what_the_rmw_reports_of_a_publisher(ros_node, role):
    """The engine writes its publishers' QoS from their profiles (qos.offered), the recorder node
    from what the rmw reports of them: both say the same, but for history and depth, which the
    rmw does not report."""
    profile = getattr(qos, role)
    topic = f"/qos_probe_{role.lower()}"
    pub = ros_node.create_publisher(VehicleState, topic, profile)
    try:
        ros_node.spin_until(lambda: ros_node.get_publishers_info_by_topic(topic),
                            what=f"the publisher of {topic} in the graph")
        reported = qos.offered(ros_node.get_publishers_info_by_topic(topic)[0].qos_profile)
        own = qos.offered(profile)
        assert own.deadline_ns == own.lifespan_ns == INFINITE_NS
        assert own.liveliness == "automatic"
        assert (own.history, own.depth) == ("keep_last", profile.depth)
        assert dataclasses.replace(own, history=reported.history, depth=reported.depth) == reported
    finally:
        ros_node.destroy_publisher(pub)
