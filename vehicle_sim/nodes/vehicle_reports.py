"""Autoware's vehicle status reports, published by the bridge (issue 12, status out).

On Autoware's topic names (what its vehicle interface publishes and its planning/control read),
from the newest vehicle state, at most ``RATE_HZ`` in sim time, each only while a reader of it is
matched (a rig without a stack builds none):

| topic | type | from |
| --- | --- | --- |
| /vehicle/status/velocity_status | VelocityReport | base_link forward, left velocity, yaw rate |
|  |  | at base_link's reference point (core.frames.at_reference) |
| /vehicle/status/steering_status | SteeringReport | the road-wheel angle applied |
| /vehicle/status/gear_status | GearReport | the gear engaged (PARK after a PARK command) |
| /vehicle/status/control_mode | ControlModeReport | MANUAL on the driver, else AUTONOMOUS |
| /vehicle/status/turn_indicators_status | TurnIndicatorsReport | the last indicator command |
| /vehicle/status/hazard_lights_status | HazardLightsReport | the last hazard command |

The reference point is the bridge's ``base_link`` (the dynamics node's); its height above the
ground counts where the model has one (the 14-DOF body: ``SimStatus.model``, core.frames).

Without autoware_vehicle_msgs (a workspace without Autoware's messages) the reports are off:
``VehicleReports.create`` returns None after one log line.
"""
from __future__ import annotations

import numpy as np

from vehicle_sim.core.frames import PoseTwist, at_reference, vehicle_reference_m
from vehicle_sim.msg import VehicleState
from vehicle_sim.nodes import conversions as conv
from vehicle_sim.nodes import qos
from vehicle_sim.nodes.reach import has_reader
from vehicle_sim.nodes.stack_inputs import AW_VEHICLE, StackInputs

RATE_HZ = 50.0  # a choice: Autoware's vehicle interfaces report at 30-50 Hz
STATUS = "/vehicle/status/"


def gear_report(gear: int, park: bool) -> int:
    """Controls.gear -> GearReport constant (DRIVE, DRIVE_2.. for a manual box's gears)."""
    r = AW_VEHICLE.GearReport
    if park:
        return r.PARK
    if gear < 0:
        return r.REVERSE
    if gear == 0:
        return r.NEUTRAL
    return min(r.DRIVE + gear - 1, r.DRIVE_18)


class VehicleReports:
    """The report publishers; ``on_state`` from the bridge's state callback."""

    @classmethod
    def create(cls, node, inputs: StackInputs, reference: str, vehicle
               ) -> VehicleReports | None:
        if AW_VEHICLE is None:
            node.get_logger().info("autoware_vehicle_msgs is not installed: the /vehicle/status "
                                   "reports are off")
            return None
        return cls(node, inputs, reference, vehicle)

    def __init__(self, node, inputs: StackInputs, reference: str, vehicle):
        self.inputs, v = inputs, AW_VEHICLE
        self._reference, self._vehicle = reference, vehicle
        self.on_model("")
        self._pubs = {name: node.create_publisher(t, STATUS + name, qos.COMMAND) for name, t in (
            ("velocity_status", v.VelocityReport), ("steering_status", v.SteeringReport),
            ("gear_status", v.GearReport), ("control_mode", v.ControlModeReport),
            ("turn_indicators_status", v.TurnIndicatorsReport),
            ("hazard_lights_status", v.HazardLightsReport))}
        self._next_ns = 0
        self._last_ns = -1  # stamp of the last report sent

    def on_model(self, model: str) -> None:
        """The dynamics node's model (SimStatus.model): where its CG is above the ground."""
        self.r_m = vehicle_reference_m(self._reference, self._vehicle, model)

    def on_state(self, msg: VehicleState, source: str) -> None:
        """Publish the reports for ``msg`` when due; source: the arbiter's active source."""
        t_ns = conv.to_ns(msg.header.stamp)
        if t_ns < self._last_ns:  # sim time went back (a new run): report from now on
            self._next_ns = 0
        if t_ns < self._next_ns:
            return
        self._next_ns, self._last_ns = t_ns + int(1e9 / RATE_HZ), t_ns
        read = {name: pub for name, pub in self._pubs.items() if has_reader(pub)}
        if not read:  # nobody reads them (a rig without a stack): nothing to build, ~0.3 ms
            return  # of the interpreter lock the platform loop would wait for
        v, stamp = AW_VEHICLE, msg.header.stamp
        # the rig's driver: MANUAL; a latched e-stop: DISENGAGED; else ready for the stack
        mode = {"driver": v.ControlModeReport.MANUAL, "estop": v.ControlModeReport.DISENGAGED
                }.get(source, v.ControlModeReport.AUTONOMOUS)
        reports = {
            "velocity_status": lambda: self._velocity(msg),
            "steering_status": lambda: v.SteeringReport(stamp=stamp,
                                                        steering_tire_angle=msg.steering_angle),
            # PARK: a park request and the gear the vehicle engaged for it (neutral, handbrake);
            # a driver who took over and drives reports the gear engaged
            "gear_status": lambda: v.GearReport(stamp=stamp, report=gear_report(
                msg.gear, self.inputs.park and msg.gear == 0)),
            "control_mode": lambda: v.ControlModeReport(stamp=stamp, mode=mode),
            "turn_indicators_status": lambda: v.TurnIndicatorsReport(
                stamp=stamp, report=self.inputs.turn_indicators),
            "hazard_lights_status": lambda: v.HazardLightsReport(
                stamp=stamp, report=self.inputs.hazard_lights)}
        for name, pub in read.items():
            pub.publish(reports[name]())

    def _velocity(self, msg: VehicleState):
        """VelocityReport at the reference point (module docstring)."""
        cg = PoseTwist(np.zeros(3), np.zeros(3), conv.vec(msg.twist.linear),
                       conv.vec(msg.twist.angular))
        at_ref = at_reference(cg, self.r_m).velocity_mps
        velocity = AW_VEHICLE.VelocityReport(longitudinal_velocity=float(at_ref[0]),
                                             lateral_velocity=float(at_ref[1]),
                                             heading_rate=msg.twist.angular.z)
        velocity.header.stamp, velocity.header.frame_id = msg.header.stamp, msg.child_frame_id
        return velocity
