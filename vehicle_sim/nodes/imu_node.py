"""IMU node: sensor_msgs/Imu on ``imu/data`` from the raw vehicle state (issue 5).

Thin: the error model is ``core.sensors.ImuModel`` (preset ``config/sensors/imu_*.yaml``), the
input/fault plumbing is ``sensor_common.SensorNode``. Every physics-step VehicleState
(``vehicle/state_raw``) is offered to the model with its own sim time; the model decides which
ones are sampled (preset ``rate_hz`` or the ``rate_hz`` override, in sim time), so the output
stamps are the sim times of the sampled states.

Frames: ``imu_link`` is fixed to ``base_link`` (origin at the CG, REP-103 axes): translation =
the preset's ``lever_arm_m`` [m], rotation = ``mounting_rpy_rad`` (roll, pitch, yaw [rad], ZYX).
The readings are in imu_link axes: specific force (+9.81 m/s^2 on z at rest, level) and angular
rate, both including the lever-arm terms. The static transform base_link -> imu_link goes to
``/tf_static`` when tf2_msgs is installed; otherwise it is logged once and the values above
apply.
Covariances: diagonal, from the discretised white noise and quantisation of the model;
orientation_covariance[0] = -1 when the preset has no orientation output.
Faults (FaultCommand target ``imu``): BIAS_STEP (channel accel_x..accel_z [m/s^2] or
gyro_x..gyro_z [rad/s], value), FREEZE, DROPOUT, NOISE_SCALE (value >= 0), CLEAR.
"""
from __future__ import annotations

import math

import numpy as np
from sensor_msgs.msg import Imu

from vehicle_sim.core.sensors import ImuModel
from vehicle_sim.core.sensors.node_params import ImuNodeParams, load_preset
from vehicle_sim.core.sensors.params import ImuParams
from vehicle_sim.msg import FaultCommand
from vehicle_sim.nodes import qos
from vehicle_sim.nodes.conversions import stamp
from vehicle_sim.nodes.main import run
from vehicle_sim.nodes.fault_book import ActiveFault, not_applicable
from vehicle_sim.nodes.sensor_common import SensorNode, StateView, sensor_rng
from vehicle_sim.paths import config_path

CHANNELS = ("accel_x", "accel_y", "accel_z", "gyro_x", "gyro_y", "gyro_z")
ACCEPTED = (FaultCommand.BIAS_STEP, FaultCommand.FREEZE, FaultCommand.DROPOUT,
            FaultCommand.NOISE_SCALE)
_STREAM_ID = 1  # seed stream of the IMU (the gps node uses 2)


class ImuNode(SensorNode):
    params_cls = ImuNodeParams

    def __init__(self) -> None:
        super().__init__("imu")
        mp = self.model.params
        self.pub = self.create_publisher(Imu, self.p.imu_topic, qos.STREAM)
        self.publish_static_tf(mp.lever_arm_m, mp.mounting_rpy_rad)
        self.get_logger().info(f"IMU {self.p.preset_file} at {mp.rate_hz:g} Hz (sim time), "
                               f"seed {self.p.seed}, frame {self.p.frame_id}")

    def make_model(self) -> ImuModel:
        params = load_preset(ImuParams, config_path(self.p.preset_file), rate_hz=self.p.rate_hz)
        return ImuModel(params, sensor_rng(self.p.seed, _STREAM_ID))

    def sample(self, t_ns: int, state: StateView) -> None:
        s = self.model.update(t_ns * 1e-9, state)
        if s is None:
            return
        msg = Imu()
        msg.header.stamp = stamp(t_ns)
        msg.header.frame_id = self.p.frame_id
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
        self.pub.publish(msg)

    def check_fault(self, cmd: FaultCommand) -> str | None:
        if cmd.fault not in ACCEPTED:
            return not_applicable("imu", ACCEPTED)
        if cmd.fault == FaultCommand.BIAS_STEP:
            if cmd.channel not in CHANNELS:
                return f"unknown channel {cmd.channel!r} (known: {', '.join(CHANNELS)})"
        elif cmd.channel:
            return f"takes no channel (acts on all), got {cmd.channel!r}"
        if cmd.fault in (FaultCommand.BIAS_STEP, FaultCommand.NOISE_SCALE):
            if not math.isfinite(cmd.value):
                return f"value must be finite, got {cmd.value}"
            if cmd.fault == FaultCommand.NOISE_SCALE and cmd.value < 0.0:
                return f"noise scale must be >= 0, got {cmd.value}"
        return None

    def apply_faults(self, active: list[ActiveFault]) -> None:
        """Sum of the bias steps per channel, product of the noise scales, any freeze/dropout."""
        steps = np.zeros(6)
        scale = 1.0
        for f in active:
            if f.fault == FaultCommand.BIAS_STEP:
                steps[CHANNELS.index(f.channel)] += f.value
            elif f.fault == FaultCommand.NOISE_SCALE:
                scale *= f.value
        faults = self.model.faults
        faults.set_bias_step(steps[:3], steps[3:])
        faults.set_noise_scale(scale)
        faults.freeze = any(f.fault == FaultCommand.FREEZE for f in active)
        faults.dropout = any(f.fault == FaultCommand.DROPOUT for f in active)


def main(args: list[str] | None = None) -> int:
    return run(ImuNode, "imu", args)
