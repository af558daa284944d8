"""The dynamics node's frames (REP-105): odometry at the reference point, /tf and /tf_static.

``reference_odometry`` turns the CG's VehicleState into nav_msgs/Odometry of base_link at the
reference point (core.frames: pose p + R r, twist v + w x r in base_link axes); with
``odometry_transform`` it is the law that state_cdr's encoder, what ``StateOutputs`` publishes,
is pinned to (test/ros/test_state_cdr.py).
``TfPublisher`` sends odom -> base_link on ``/tf`` for every Odometry (same stamp: the state's
simulation time) and once, latched, map -> odom on ``/tf_static`` (``odom_in_map``, identity by
default). QoS as tf2_ros's broadcasters (qos.TF, qos.TF_STATIC). Without tf2_msgs (a ROS
workspace that lacks it) one log line, and no TF. Given the lockstep engine's recording
(edge_recording), what they send is also recorded where the recorder wants it.
"""
from __future__ import annotations

import numpy as np
from geometry_msgs.msg import Point, Pose, Quaternion, TransformStamped, Twist, Vector3
from nav_msgs.msg import Odometry
from rclpy.node import Node

from vehicle_sim.core.frames import OdomInMap
from vehicle_sim.core.vehicle.interface import VehicleSnapshot
from vehicle_sim.msg import VehicleState
from vehicle_sim.nodes import conversions as conv
from vehicle_sim.nodes import qos
from vehicle_sim.nodes.edge_recording import Edge, EdgeRecording
from vehicle_sim.nodes.state_cdr import StateEncoder


def reference_odometry(state: VehicleState, r_m: np.ndarray) -> Odometry:
    """nav_msgs/Odometry of base_link at r_m [m] from the CG (body axes); r = 0: the CG."""
    msg = conv.odometry(state)
    if not np.any(r_m):
        return msg
    p, t, q = state.pose.position, state.twist, state.pose.orientation
    w = t.angular
    position_m, velocity_mps = conv.reference_motion(
        (p.x, p.y, p.z), (q.x, q.y, q.z, q.w), (t.linear.x, t.linear.y, t.linear.z),
        (w.x, w.y, w.z), r_m)
    # new objects: the odometry message shares its nested fields with ``state`` (rclpy), which
    # stays the CG's
    msg.pose.pose = Pose(position=conv.fill_xyz(Point(), position_m),
                         orientation=Quaternion(x=q.x, y=q.y, z=q.z, w=q.w))
    msg.twist.twist = Twist(linear=conv.vector3(velocity_mps),
                            angular=Vector3(x=w.x, y=w.y, z=w.z))
    return msg


def odometry_transform(odom: Odometry) -> TransformStamped:
    """The transform header.frame_id -> child_frame_id that an Odometry's pose describes."""
    tf = TransformStamped(header=odom.header, child_frame_id=odom.child_frame_id)
    p = odom.pose.pose.position
    tf.transform.translation.x, tf.transform.translation.y, tf.transform.translation.z = \
        p.x, p.y, p.z
    tf.transform.rotation = odom.pose.pose.orientation
    return tf


def map_to_odom(odom_in_map: OdomInMap, map_frame: str, odom_frame: str,
                t_ns: int) -> TransformStamped:
    tf = TransformStamped(child_frame_id=odom_frame)
    tf.header.frame_id, tf.header.stamp = map_frame, conv.stamp(t_ns)
    tf.transform.translation.x, tf.transform.translation.y = odom_in_map.x_m, odom_in_map.y_m
    tf.transform.rotation = conv.quaternion_from_rpy(0.0, 0.0, odom_in_map.yaw_rad)
    return tf


class TfPublisher:
    """/tf and /tf_static of the dynamics node (``enabled`` False without tf2_msgs)."""

    def __init__(self, node: Node, odom_in_map: OdomInMap, map_frame: str, odom_frame: str,
                 start_ns: int = 0, recording: EdgeRecording | None = None):
        self.enabled = False
        try:
            from tf2_msgs.msg import TFMessage
        except ImportError:
            node.get_logger().info("tf2_msgs not installed: no odom -> base_link on /tf and no "
                                   "map -> odom on /tf_static (odometry is still published)")
            return
        self._message = TFMessage
        self._out = Edge(node.create_publisher(TFMessage, "/tf", qos.TF), recording)
        self._static = Edge(node.create_publisher(TFMessage, "/tf_static", qos.TF_STATIC),
                            recording, latched=True)
        self._static.send(start_ns, TFMessage(transforms=[
            map_to_odom(odom_in_map, map_frame, odom_frame, start_ns)]))
        self.enabled = True

    def read(self) -> bool:
        """A /tf reader is matched (a tf2 listener, a recorder) or /tf is recorded."""
        return self.enabled and self._out.wanted()

    def send(self, t_ns: int, tf: bytes) -> None:
        """odom -> base_link at t_ns [ns], a TFMessage serialised by state_cdr.StateEncoder
        (equal to one of ``odometry_transform``; physics thread: rclpy publish is safe), after
        ``read``."""
        if self.enabled:
            self._out.send(t_ns, tf)


class StateOutputs:
    """The vehicle state's outputs (the dynamics node's, and the lockstep engine's edges):
    ``vehicle/state`` and ``odom`` (QoS overridable), ``vehicle/state_raw`` (``raw_qos``) and
    /tf, odom and /tf at base_link ``base_r_m`` [m] from the CG (the state stays the CG's).
    The messages go as CDR bytes (state_cdr.StateEncoder: conversions.vehicle_state,
    reference_odometry and odometry_transform, pinned equal by test/ros/test_state_cdr.py);
    with the engine's ``recording``, also to it (edge_recording.Edge)."""

    def __init__(self, node: Node, p, base_r_m: np.ndarray, raw_qos,
                 recording: EdgeRecording | None = None):
        self.pub_state = node.create_publisher(VehicleState, "vehicle/state", qos.STATE,
                                               qos_overriding_options=qos.overridable())
        self.pub_raw = node.create_publisher(VehicleState, "vehicle/state_raw", raw_qos)
        self.pub_odom = node.create_publisher(Odometry, "odom", qos.STATE,
                                              qos_overriding_options=qos.overridable())
        self._state, self._raw, self._odom = (Edge(pub, recording) for pub in (
            self.pub_state, self.pub_raw, self.pub_odom))
        self.base_r_m = base_r_m
        # p: DynamicsParams (odom_in_map, map_frame, odom_frame, publish_tf)
        self.tf = (TfPublisher(node, p.odom_in_map, p.map_frame, p.odom_frame,
                               recording=recording) if p.publish_tf else None)
        self.encoder = StateEncoder(p.odom_frame, p.base_frame, p.model, base_r_m)

    def publish(self, s: VehicleSnapshot, t_ns: int, raw: bool, state: bool) -> None:
        """``s`` stamped t_ns [ns] as the raw state and/or the state with its odometry and /tf,
        each only to a topic where a reader is matched or that is recorded (the engine's edges
        carry just what is read; a message no reader matched would reach nobody), packed once
        for all of them (~12 us, against ~89 us to build the three messages) and not at all
        for none."""
        raw = raw and self._raw.wanted()
        to_state = state and self._state.wanted()
        to_odom = state and self._odom.wanted()
        to_tf = state and self.tf is not None and self.tf.read()
        if not (raw or to_state or to_odom or to_tf):
            return
        state_cdr, odom, tf = self.encoder.encode(s, t_ns, odometry=to_odom or to_tf)
        if raw:
            self._raw.send(t_ns, state_cdr)
        if to_state:
            self._state.send(t_ns, state_cdr)
        if to_odom:
            self._odom.send(t_ns, odom)
        if to_tf:
            self.tf.send(t_ns, tf)
