"""GPS node: sensor_msgs/NavSatFix on ``gnss/fix`` (+ ENU velocity) from the raw vehicle state.

Thin: the receiver model is ``core.sensors.GnssModel`` (preset ``config/sensors/gnss_*.yaml``,
optional GnssZones file with building footprints and outage polygons in the local ENU frame =
odom), the input/fault plumbing is ``sensor_common.SensorNode``. Fixes are sampled at the preset
rate in sim time and published once the sim time passes their release time (preset
``latency_s``); header stamp = sim time of the measured state.

Frames: ``gnss_link`` is the antenna, fixed to ``base_link`` (REP-103 axes) at the preset's
``antenna_lever_arm_m`` [m] from the CG (given from base_link's reference point), no rotation.
The static transform base_link -> gnss_link goes to ``/tf_static`` when tf2_msgs is installed;
otherwise it is logged once.
The ENU origin of odom is the preset's ``origin`` (or ``origin.*`` with ``origin_override``).

NavSatFix: WGS-84 degrees, altitude above the ellipsoid, service GPS; with a fix, status
STATUS_FIX and ENU position covariance with COVARIANCE_TYPE_DIAGONAL_KNOWN; inside an outage zone
or under the NO_FIX fault, STATUS_NO_FIX, NaN position and COVARIANCE_TYPE_UNKNOWN.
Velocity (TwistWithCovarianceStamped, frame_id gnss_link, values in ENU axes as
ublox_gps does): linear covariance from the model, covariance[21] (angular) = -1.
QoS: qos.SENSOR (REP-2003: reliable keep-last 10, the system default), matched by both reliable
(RViz, rosbag, default QoS) and best-effort (SensorDataQoS) subscribers; per-topic override by
``qos_overrides./gnss/fix.publisher.*`` (qos.py).
Faults (target ``gps``): FREEZE, DROPOUT, NOISE_SCALE (value), POSITION_JUMP (vector, ENU m),
NO_FIX, CLEAR.
"""
from __future__ import annotations

import numpy as np
from geometry_msgs.msg import TwistWithCovarianceStamped
from sensor_msgs.msg import NavSatFix, NavSatStatus

from vehicle_sim.core.sensors import STATUS_FIX, GnssFix, GnssModel
from vehicle_sim.core.sensors.build import GPS_STREAM, gnss_model
from vehicle_sim.core.sensors.faults import check_gps
from vehicle_sim.core.sensors.node_params import GpsNodeParams
from vehicle_sim.nodes.conversions import stamp
from vehicle_sim.nodes.main import NodeEntry, run_nodes
from vehicle_sim.nodes.sensor_common import SensorNode, StateView


class GpsNode(SensorNode):
    """A GNSS receiver: fixes (and velocity) at ``rate_hz`` from the core GnssModel."""

    node_name, seed_stream = "gps", GPS_STREAM
    params_cls, check_fault = GpsNodeParams, check_gps

    def __init__(self, **options) -> None:
        super().__init__(**options)
        mp = self.model.params
        self.pub_fix = self.sensor_publisher(NavSatFix, self.p.fix_topic)
        self.pub_vel = None
        if self.p.velocity_topic and mp.velocity_enabled:
            self.pub_vel = self.sensor_publisher(TwistWithCovarianceStamped, self.p.velocity_topic)
        o = mp.origin
        self.announce("GNSS", mp.antenna_lever_arm_m, (0.0, 0.0, 0.0),
                      f"origin {o.latitude_deg:.7f}, {o.longitude_deg:.7f}, {o.altitude_m:.2f} m, "
                      f"zones {self.p.zones_file or 'none'}, velocity "
                      f"{self.p.velocity_topic if self.pub_vel else 'off'}")

    def make_model(self) -> GnssModel:
        return gnss_model(self.p, self.rng())

    def sample(self, t_ns: int, state: StateView) -> None:
        for fix in self.model.update(t_ns * 1e-9, state):
            self.pub_fix.publish(navsatfix(fix, self.p.frame_id))
            if self.pub_vel is not None and fix.velocity_enu_mps is not None:
                self.pub_vel.publish(gnss_velocity(fix, self.p.frame_id))


def navsatfix(fix: GnssFix, frame_id: str) -> NavSatFix:
    """sensor_msgs/NavSatFix of a core fix, stamped at its measurement time."""
    msg = NavSatFix(latitude=fix.latitude_deg, longitude=fix.longitude_deg,
                    altitude=fix.altitude_m)
    msg.header.stamp, msg.header.frame_id = stamp(round(fix.stamp_s * 1e9)), frame_id
    msg.status.service = NavSatStatus.SERVICE_GPS
    msg.status.status = (NavSatStatus.STATUS_FIX if fix.status == STATUS_FIX
                         else NavSatStatus.STATUS_NO_FIX)
    if fix.covariance_known:
        msg.position_covariance = np.asarray(fix.position_cov_enu_m2, dtype=float).ravel()
        msg.position_covariance_type = NavSatFix.COVARIANCE_TYPE_DIAGONAL_KNOWN
    else:
        msg.position_covariance_type = NavSatFix.COVARIANCE_TYPE_UNKNOWN
    return msg


def gnss_velocity(fix: GnssFix, frame_id: str) -> TwistWithCovarianceStamped:
    """geometry_msgs/TwistWithCovarianceStamped (ENU) of a core fix with a velocity."""
    msg = TwistWithCovarianceStamped()
    msg.header.stamp, msg.header.frame_id = stamp(round(fix.stamp_s * 1e9)), frame_id
    v = fix.velocity_enu_mps
    msg.twist.twist.linear.x, msg.twist.twist.linear.y, msg.twist.twist.linear.z = \
        float(v[0]), float(v[1]), float(v[2])
    cov = np.zeros((6, 6))
    cov[:3, :3] = fix.velocity_cov_enu_m2ps2
    cov[3, 3] = -1.0  # angular rate not measured (ublox_gps: 'angular rate unsupported')
    msg.twist.covariance = cov.ravel()
    return msg


# how a process runs this node (nodes.main; vehicle_sim_compose runs several in one)
ENTRY = NodeEntry(GpsNode, "gps")


def main(args: list[str] | None = None) -> int:
    return run_nodes([(ENTRY, [])], args)
