"""nodes.cdr_message against rmw_fastrtps's serialization (rclpy.serialization): the same length
and the same bytes but for the padding, which it zeroes; the bytes deserialize to the message."""
from __future__ import annotations

import pytest
from rclpy.serialization import deserialize_message, serialize_message

from vehicle_sim.nodes.cdr_message import cdr_bytes


def _messages():
    from geometry_msgs.msg import TransformStamped, TwistWithCovarianceStamped
    from rosgraph_msgs.msg import Clock
    from sensor_msgs.msg import NavSatFix
    from tf2_msgs.msg import TFMessage
    from vehicle_sim.msg import AccidentEvent, TrafficLight, TrafficLightArray, VehicleControl
    fix = NavSatFix(latitude=48.1, longitude=11.5, altitude=520.25)
    fix.header.frame_id, fix.header.stamp.sec, fix.header.stamp.nanosec = "gnss_link", 3, 7
    fix.position_covariance[0] = 2.5
    twist = TwistWithCovarianceStamped()
    twist.header.frame_id = "g"  # 1 character: padding before the doubles
    twist.twist.covariance[35] = -1.0
    tf = TransformStamped(child_frame_id="odom")
    tf.header.frame_id, tf.transform.rotation.w = "map", 1.0
    lights = TrafficLightArray(source="traffic", lights=[
        TrafficLight(id="j1_ns", state=2, pedestrian=False),
        TrafficLight(id="j1_ped_we", state=1, pedestrian=True)])
    lights.lights[0].position.x = 12.5
    return [fix, twist, TFMessage(transforms=[tf]), TFMessage(), lights,
            TrafficLightArray(source="x"), VehicleControl(steering_angle=0.1, gear=1),
            AccidentEvent(id=4, actor="ego", victim="car_17", impact_speed=3.5),
            Clock()]


@pytest.mark.parametrize("msg", _messages(), ids=lambda m: type(m).__name__)
def test_the_bytes_are_rmw_fastrtps_ones_with_the_padding_zeroed(msg):
    ours, theirs = cdr_bytes(msg), serialize_message(msg)
    assert len(ours) == len(theirs)
    assert all(a == b or a == 0 for a, b in zip(ours, theirs)), "differs only in padding"
    assert deserialize_message(ours, type(msg)) == msg


def test_what_it_does_not_write_is_refused_by_name():
    from std_msgs.msg import Empty
    with pytest.raises(TypeError, match="empty Empty"):
        cdr_bytes(Empty())
