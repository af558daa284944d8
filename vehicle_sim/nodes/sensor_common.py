"""What the imu and gps nodes share: the VehicleState input, fault commands, the static TF.

``SensorNode`` subscribes the raw vehicle state and feeds ``sample(t_ns, state)`` with the
state's own simulation time (header stamp), so sensor timing follows simulation time, not wall
time. A state with a non-finite field is skipped (rate-limited warning); a stamp earlier than the
previous one means the simulation restarted: the model is rebuilt from its seed. Fault commands
whose target is ``fault_target`` go through a ``fault_link.FaultLink`` (checked by the
subclass's ``check_fault``, answered on ``faults/status``); after every change the model's fault
inputs are set from the active faults (``model.faults.apply``: offsets add, noise scales
multiply).

Lockstep (parameter ``lockstep``): the node is a lockstep peer (``LockstepPeer``) and acknowledges
each /clock tick once it has modelled the state of that tick. The dynamics node waits for the ack
before it runs the next frame, so a sensor starved of CPU holds the run back instead of losing
states from its reader queue (a lost state moves a sample and changes every noise draw after it).
"""
from __future__ import annotations

import math

import numpy as np
from rclpy.node import Node

from vehicle_sim.core.config import load
from vehicle_sim.core.faults import Check
from vehicle_sim.core.frames import mount_from_reference_m, vehicle_reference_m
from vehicle_sim.core.sensors.build import sensor_rng
from vehicle_sim.core.vehicle.params import VehicleParams
from vehicle_sim.msg import VehicleState
from vehicle_sim.nodes import qos
from vehicle_sim.nodes.conversions import quaternion_from_rpy, rpy_from_quaternion, to_ns, vec
from vehicle_sim.nodes.diagnostics import Diagnostics, faults_check
from vehicle_sim.nodes.edge_recording import Edge, EdgeRecording
from vehicle_sim.nodes.fault_link import FaultLink
from vehicle_sim.nodes.lockstep_peer import LockstepPeer
from vehicle_sim.nodes.params import declare_and_load
from vehicle_sim.paths import config_path


class StateView:
    """A core KinematicState read lazily from a VehicleState (converted only when sampled)."""

    __slots__ = ("_m",)

    def __init__(self, msg: VehicleState):
        self._m = msg

    @property
    def position_m(self) -> np.ndarray:
        p = self._m.pose.position
        return np.array([p.x, p.y, p.z])

    @property
    def rpy_rad(self) -> np.ndarray:
        return np.array(rpy_from_quaternion(self._m.pose.orientation))

    @property
    def velocity_mps(self) -> np.ndarray:
        return vec(self._m.twist.linear)

    @property
    def angular_velocity_radps(self) -> np.ndarray:
        return vec(self._m.twist.angular)

    @property
    def acceleration_mps2(self) -> np.ndarray:
        return vec(self._m.linear_acceleration)

    @property
    def angular_acceleration_radps2(self) -> np.ndarray:
        return vec(self._m.angular_acceleration)


def first_non_finite(msg: VehicleState) -> str | None:
    """Name of the first non-finite field the sensors read, or None."""
    p, q, t = msg.pose.position, msg.pose.orientation, msg.twist
    groups = (("pose.position", (p.x, p.y, p.z)), ("pose.orientation", (q.x, q.y, q.z, q.w)),
              ("twist.linear", (t.linear.x, t.linear.y, t.linear.z)),
              ("twist.angular", (t.angular.x, t.angular.y, t.angular.z)),
              ("linear_acceleration", _tuple(msg.linear_acceleration)),
              ("angular_acceleration", _tuple(msg.angular_acceleration)))
    for name, values in groups:
        if not all(map(math.isfinite, values)):
            return name
    return None


def _tuple(v) -> tuple[float, float, float]:
    return v.x, v.y, v.z


class SensorNode(Node):
    """Base of the sensor nodes. Subclasses set ``node_name``, ``seed_stream``, ``params_cls``
    and ``check_fault`` (a core fault check) and implement ``make_model()`` (a model with
    ``faults.apply(active)``, drawing from ``rng()``) and ``sample(t_ns, state)``."""

    node_name: str
    seed_stream: int  # this sensor's generator among those of one scenario seed
    params_cls: type
    check_fault: Check

    def __init__(self, **options):
        super().__init__(self.node_name, **options)
        self.p = declare_and_load(self, self.params_cls)
        self.model = self.make_model()
        self.t_ns: int | None = None  # sim time of the last accepted state
        self.seen_ns = -1  # stamp of the newest state received, accepted or not [ns]
        self.skipped = 0
        self.faults = FaultLink(self, self.p.fault_target, type(self).check_fault,
                                now_ns=lambda: self.t_ns or 0,
                                on_change=lambda active: self.model.faults.apply(active))
        self.create_subscription(VehicleState, self.p.state_topic, self._on_state,
                                 # fast, lockstep: every state, as the dynamics publishes it
                                 qos.SENSOR_STATE_IN if self.p.mode == "realtime"
                                 else qos.RELIABLE_STREAM)
        self.diagnostics = Diagnostics(self, self.node_name)  # once per simulated second
        self.lockstep = (LockstepPeer(self, self._frame_ready, lambda t_ns: (0, 0),
                                      lambda: None)
                         if self.p.lockstep else None)
        self._held: list[VehicleState] = []  # lockstep: states before the peer has joined

    def _on_state(self, msg: VehicleState) -> None:
        if self.lockstep is None:
            self._model_state(msg)
            return
        # modelled (and published) once the peer has joined: its first outputs reach every
        # reader (a respawned sensor's, the recorder's); until then held, in order
        self._held.append(msg)
        self.seen_ns = max(self.seen_ns, to_ns(msg.header.stamp))
        if self.lockstep.joined:
            self._model_held()
        self.lockstep.pump()

    def _frame_ready(self, t_ns: int) -> bool:
        """Lockstep: the state of frame t_ns is in (asked once the peer has joined)."""
        self._model_held()
        return self.seen_ns >= t_ns

    def _model_held(self) -> None:
        held, self._held = self._held, []
        for msg in held:
            self._model_state(msg)

    def _model_state(self, msg: VehicleState) -> None:
        bad = first_non_finite(msg)
        if bad is not None:
            self.skipped += 1
            self.get_logger().warning(f"skipping vehicle state with non-finite {bad} "
                                      f"({self.skipped} skipped so far)",
                                      throttle_duration_sec=1.0)
            return
        t_ns = to_ns(msg.header.stamp)
        if self.t_ns is not None and t_ns < self.t_ns:
            self.get_logger().warning(f"sim time went back from {self.t_ns * 1e-9:.3f} to "
                                      f"{t_ns * 1e-9:.3f} s: simulation restarted, sensor model "
                                      "re-seeded")
            self.model = self.make_model()
            self.model.faults.apply(self.faults.active)
        self.t_ns = t_ns
        self.faults.expire(t_ns)
        if self.diagnostics.due(t_ns):
            self.diagnostics.publish(t_ns, [faults_check(f"vehicle_sim: {self.p.fault_target}",
                                                         [f.kind for f in self.faults.active])])
        self.sample(t_ns, StateView(msg))

    def sensor_publisher(self, msg_type: type, topic: str):
        """A publisher of a sensor output: qos.SENSOR, its QoS overridable per topic (qos.py)."""
        return self.create_publisher(msg_type, topic, qos.SENSOR,
                                     qos_overriding_options=qos.overridable())

    def announce(self, label: str, xyz: tuple[float, float, float],
                 rpy: tuple[float, float, float], details: str) -> None:
        """Publish the sensor frame (``publish_static_tf``) and log the start line."""
        self.publish_static_tf(xyz, rpy)
        self.get_logger().info(f"{label} {self.p.preset_file} at {self.model.params.rate_hz:g} "
                               f"Hz (sim time), seed {self.p.seed}, {details}")

    def publish_static_tf(self, xyz: tuple[float, float, float],
                          rpy: tuple[float, float, float]) -> None:
        """The sensor frame on /tf_static (sensor_mount_tf), stamped with this node's clock."""
        self._tf_pub = sensor_mount_tf(self, self.p, xyz, rpy, self.get_clock().now().to_msg())

    # ---- subclass hooks ------------------------------------------------------------------
    def make_model(self):
        raise NotImplementedError

    def sample(self, t_ns: int, state: StateView) -> None:
        raise NotImplementedError

    def rng(self) -> np.random.Generator:
        """A fresh generator of this sensor for the node's seed (every model rebuild)."""
        return sensor_rng(self.p.seed, self.seed_stream)


def sensor_mount_tf(node: Node, p, xyz: tuple[float, float, float],
                    rpy: tuple[float, float, float], stamp,
                    recording: EdgeRecording | None = None):
    """base_frame -> frame_id of a sensor (``p``: its SensorNodeParams) on /tf_static when
    tf2_msgs is installed (the publisher, latched), else one info line (None); also to the
    lockstep engine's ``recording`` (edge_recording.EdgeRecording) at the stamp's time.

    ``xyz`` is the preset's mount from the CG; the transform gives it from base_link at the
    ``base_link`` reference point (core.frames.mount_from_reference_m)."""
    child, parent = p.frame_id, p.base_frame
    if p.base_link != "cg":
        vehicle = load(VehicleParams, config_path(p.vehicle_file))
        xyz = mount_from_reference_m(xyz, vehicle_reference_m(p.base_link, vehicle, p.model))
    try:
        from geometry_msgs.msg import TransformStamped
        from tf2_msgs.msg import TFMessage
    except ImportError:
        node.get_logger().info(
            f"tf2_msgs not installed: static transform {parent} -> {child} not published "
            f"(translation {tuple(xyz)} m, rpy {tuple(rpy)} rad; see the node docstring)")
        return None
    tf = TransformStamped(child_frame_id=child)
    tf.header.frame_id = parent
    tf.header.stamp = stamp
    tf.transform.translation.x, tf.transform.translation.y, tf.transform.translation.z = \
        (float(c) for c in xyz)
    tf.transform.rotation = quaternion_from_rpy(*(float(a) for a in rpy))
    pub = node.create_publisher(TFMessage, "/tf_static", qos.TF_STATIC)
    Edge(pub, recording, latched=True).send(to_ns(stamp), TFMessage(transforms=[tf]))
    return pub
