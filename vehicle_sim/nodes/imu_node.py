"""IMU node: sensor_msgs/Imu on ``imu/data`` from the raw vehicle state (issue 5).

Thin: the error model is ``core.sensors.ImuModel`` (preset ``config/sensors/imu_*.yaml``), the
input/fault plumbing is ``sensor_common.SensorNode``. Every physics-step VehicleState
(``vehicle/state_raw``) is offered to the model with its own sim time; the model decides which
ones are sampled (preset ``rate_hz`` or the ``rate_hz`` override, in sim time), so the output
stamps are the sim times of the sampled states.

Frames: ``imu_link`` is fixed to ``base_link`` (REP-103 axes): translation = the preset's
``lever_arm_m`` [m] from the CG, given from base_link's reference point (``base_link``),
rotation = ``mounting_rpy_rad`` (roll, pitch, yaw [rad], ZYX).
The readings are in imu_link axes: specific force (+9.81 m/s^2 on z at rest, level) and angular
rate, both including the lever-arm terms. The static transform base_link -> imu_link goes to
``/tf_static`` when tf2_msgs is installed; otherwise it is logged once and the values above
apply.
QoS: qos.SENSOR (REP-2003: drivers publish with the system default, reliable keep-last 10), so
a default-QoS subscriber (Autoware's imu_corrector) matches as well as a SensorDataQoS one;
per-topic override by ``qos_overrides./imu/data.publisher.*`` (qos.py).
Covariances: diagonal, from the model: the discretised white noise, the quantisation and the
stationary bias (turn-on and Gauss-Markov: the error a reader without a bias estimate sees);
orientation_covariance[0] = -1 when the preset has no orientation output.
Faults (FaultCommand target ``imu``): BIAS_STEP (channel accel_x..accel_z [m/s^2] or
gyro_x..gyro_z [rad/s], value), FREEZE, DROPOUT, NOISE_SCALE (value >= 0), CLEAR.
"""
from __future__ import annotations

from sensor_msgs.msg import Imu

from vehicle_sim.core.sensors import ImuModel, ImuSample
from vehicle_sim.core.sensors.build import IMU_STREAM, imu_model
from vehicle_sim.core.sensors.faults import check_imu
from vehicle_sim.core.sensors.node_params import ImuNodeParams
from vehicle_sim.nodes.conversions import stamp
from vehicle_sim.nodes.main import NodeEntry, run_nodes
from vehicle_sim.nodes.sensor_common import SensorNode, StateView


class ImuNode(SensorNode):
    """An IMU: specific force and angular rate in imu_link axes at ``rate_hz``."""

    node_name, seed_stream = "imu", IMU_STREAM
    params_cls, check_fault = ImuNodeParams, check_imu

    def __init__(self, **options) -> None:
        super().__init__(**options)
        mp = self.model.params
        self.pub = self.sensor_publisher(Imu, self.p.imu_topic)
        self.announce("IMU", mp.lever_arm_m, mp.mounting_rpy_rad, f"frame {self.p.frame_id}")

    def make_model(self) -> ImuModel:
        return imu_model(self.p, self.rng())

    def sample(self, t_ns: int, state: StateView) -> None:
        s = self.model.update(t_ns * 1e-9, state)
        if s is not None:
            self.pub.publish(imu_msg(s, t_ns, self.p.frame_id))


def imu_msg(s: ImuSample, t_ns: int, frame_id: str) -> Imu:
    """sensor_msgs/Imu of a core sample stamped t_ns (orientation only when the model gives
    one; its covariances as the model states them)."""
    msg = Imu()
    msg.header.stamp = stamp(t_ns)
    msg.header.frame_id = frame_id
    a, w = s.linear_acceleration_mps2, s.angular_velocity_radps
    msg.linear_acceleration.x, msg.linear_acceleration.y, msg.linear_acceleration.z = \
        float(a[0]), float(a[1]), float(a[2])
    msg.angular_velocity.x, msg.angular_velocity.y, msg.angular_velocity.z = \
        float(w[0]), float(w[1]), float(w[2])
    msg.linear_acceleration_covariance = s.linear_acceleration_cov.ravel()
    msg.angular_velocity_covariance = s.angular_velocity_cov.ravel()
    msg.orientation_covariance = s.orientation_cov.ravel()
    if s.orientation_xyzw is not None:
        q = s.orientation_xyzw
        msg.orientation.x, msg.orientation.y, msg.orientation.z, msg.orientation.w = \
            (float(c) for c in q)
    return msg


# how a process runs this node (nodes.main; vehicle_sim_compose runs several in one)
ENTRY = NodeEntry(ImuNode, "imu")


def main(args: list[str] | None = None) -> int:
    return run_nodes([(ENTRY, [])], args)
