"""Stack command topics of the bridge's mux (issue 12): standard messages -> DriveCommand.

Every source here is one entry of the arbiter (takeover, watchdog, e-stop apply to all):

| source | topic | type |
| --- | --- | --- |
| autonomy | autonomy/control | vehicle_sim/VehicleControl (pedals, as before) |
| cmd_vel | cmd_vel | geometry_msgs/Twist (teleop, Nav2 before Kilted) or TwistStamped (Nav2 with
``enable_stamped_cmd_vel``, its default from Kilted on): the type its publishers use
(``type_following``) |
| cmd_vel_stamped | cmd_vel_stamped | geometry_msgs/TwistStamped (a stack remapped there) |
| ackermann | ackermann_cmd | ackermann_msgs/AckermannDriveStamped |
| autoware | /control/command/control_cmd | autoware_control_msgs/Control |

plus Autoware's gear (``/control/command/gear_cmd``), turn-indicator and hazard-light commands,
which are state, not sources: the gear applies to the autoware source's commands, the lights are
reported (``vehicle_reports``). Speed/acceleration/curvature commands go through the
``StackController`` (one per source) at the newest vehicle state; the result, and every bad
input (header, non-finite field, unknown gear), through ``controls.validate_setpoint``; a
VehicleControl through ``controls.validate``, the dynamics node's own check, so that a command it
would reject is not forwarded (nor recorded on vehicle/control). Every float field of a message
is checked, also those the command does not use (a jerk, cmd_vel's linear.y): a non-finite one
says the sender is broken.

A message package that is not installed (a workspace without ackermann_msgs or Autoware's
messages) switches its topics off with one log line.
"""
from __future__ import annotations

import importlib
import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from geometry_msgs.msg import Twist, TwistStamped
from rclpy.node import Node

from vehicle_sim.core.controls import (
    ControlLimits,
    DriveCommand,
    Validated,
    header_problem,
    validate,
    validate_setpoint,
)
from vehicle_sim.core.motion.stack_controller import (
    LongitudinalModel,
    Measured,
    Setpoint,
    StackController,
    twist_curvature,
)
from vehicle_sim.core.vehicle.interface import Controls
from vehicle_sim.msg import VehicleControl
from vehicle_sim.nodes import conversions as conv
from vehicle_sim.nodes import qos
from vehicle_sim.nodes.type_following import TypeFollowingSubscription

INT8_MAX = 127  # VehicleControl.gear is an int8
MAX_STAMP_SKEW_S = 1.0  # a choice: larger than any stack's command period, far below a clock mix
CONTROL_CMD = "/control/command/control_cmd"
GEAR_CMD = "/control/command/gear_cmd"
TURN_CMD = "/control/command/turn_indicators_cmd"
HAZARD_CMD = "/control/command/hazard_lights_cmd"


def optional(package: str) -> Any | None:
    """``package.msg`` or None when it is not installed."""
    try:
        return importlib.import_module(f"{package}.msg")
    except ImportError:
        return None


ACKERMANN = optional("ackermann_msgs")
AW_CONTROL = optional("autoware_control_msgs")
AW_VEHICLE = optional("autoware_vehicle_msgs")


def initial_pose(msg, map_frame: str = "map", odom_frame: str = "odom"
                 ) -> tuple[tuple[float, float, float, bool] | None, str]:
    """geometry_msgs/PoseWithCovarianceStamped (/initialpose, RViz's "2D Pose Estimate") ->
    ((x [m], y [m], yaw [rad] of base_link, True if in map), '') or (None, why it is refused).
    Frames: the node's map frame ('' too, as RViz's fixed frame) or its odom frame. The
    orientation is normalised (a stack may send a quaternion that is not quite unit)."""
    frame, p, q = msg.header.frame_id, msg.pose.pose.position, msg.pose.pose.orientation
    frames = ("", map_frame, odom_frame)
    if frame not in frames:
        return None, f"frame_id {frame!r} is not one of {list(frames)}"
    for name, value in (("x", p.x), ("y", p.y), ("orientation.x", q.x), ("orientation.y", q.y),
                        ("orientation.z", q.z), ("orientation.w", q.w)):
        if not math.isfinite(value) or abs(value) > 1e7:
            return None, f"pose {name} is {value}"
    unit = conv.unit_xyzw(q.x, q.y, q.z, q.w)  # the quaternion rule of conversions
    if unit is None:
        return None, f"orientation has norm {math.hypot(q.x, q.y, q.z, q.w):g}, not a rotation"
    return (p.x, p.y, conv.yaw_from_xyzw(*unit), frame != odom_frame), ""


def autoware_gear(command: int) -> int | None:
    """GearCommand -> Controls.gear (DRIVE*, LOW* 1; REVERSE* -1; NEUTRAL, PARK 0); None:
    not a GearCommand constant (NONE, "no request", is handled by the caller)."""
    g = AW_VEHICLE.GearCommand
    if g.DRIVE <= command <= g.DRIVE_18 or command in (g.LOW, g.LOW_2):
        return 1
    if command in (g.REVERSE, g.REVERSE_2):
        return -1
    if command in (g.NEUTRAL, g.PARK):
        return 0
    return None


@dataclass(frozen=True)
class StackTopic:
    """A command topic: one source of the arbiter (``name``) unless ``state_only``."""

    name: str
    topic: str
    msg_type: type
    convert: Callable[[Any], Validated]
    state_only: bool = False  # gear / lights: no DriveCommand of its own
    alt_types: tuple[type, ...] = ()  # other types its publishers may use (type_following)


def subscribe(node: Node, topics: tuple[StackTopic, ...],
              on_message: Callable[[StackTopic, Any], None]) -> None:
    """One subscription per stack topic (qos.COMMAND), following the publishers' type where a
    topic has alternatives."""
    for t in topics:
        if t.alt_types:
            TypeFollowingSubscription(node, (t.msg_type, *t.alt_types), t.topic,
                                      partial(on_message, t), qos.COMMAND)
        else:
            node.create_subscription(t.msg_type, t.topic, partial(on_message, t), qos.COMMAND)


class StackInputs:
    """The converters of every stack topic, the controllers and the Autoware vehicle state."""

    def __init__(self, vehicle, limits: ControlLimits, info: Callable[[str], None],
                 base_frame: str):
        self.model, self.limits = LongitudinalModel.from_vehicle(vehicle), limits
        self.frames = ("", base_frame)  # a stamped command's frame: the vehicle's (REP-105)
        self._control_limits = ControlLimits(limits.max_steer_rad, INT8_MAX)  # autonomy/control
        self.measured = Measured(0.0, 0.0, 0)
        self.controllers: dict[str, StackController] = {}
        self.gear, self.park = 1, False  # Autoware's gear command (starts in drive)
        self.turn_indicators = 1  # TurnIndicatorsCommand.DISABLE
        self.hazard_lights = 1  # HazardLightsCommand.DISABLE
        self.last: dict[str, DriveCommand] = {}
        topics = [StackTopic("autonomy", "autonomy/control", VehicleControl, self._control),
                  StackTopic("cmd_vel", "cmd_vel", Twist, partial(self._twist, "cmd_vel"),
                             alt_types=(TwistStamped,)),
                  StackTopic("cmd_vel_stamped", "cmd_vel_stamped", TwistStamped,
                             partial(self._twist, "cmd_vel_stamped"))]
        if ACKERMANN is None:
            info("ackermann_msgs is not installed: ackermann_cmd is off")
        else:
            topics.append(StackTopic("ackermann", "ackermann_cmd",
                                     ACKERMANN.AckermannDriveStamped, self._ackermann))
        if AW_CONTROL is None or AW_VEHICLE is None:
            info("autoware_control_msgs / autoware_vehicle_msgs are not installed: the Autoware "
                 "control, gear, indicator and hazard commands are off")
        else:
            v = AW_VEHICLE
            topics += [StackTopic("autoware", CONTROL_CMD, AW_CONTROL.Control, self._autoware),
                       StackTopic("gear", GEAR_CMD, v.GearCommand, self._gear, True),
                       StackTopic("turn", TURN_CMD, v.TurnIndicatorsCommand, self._turn, True),
                       StackTopic("hazard", HAZARD_CMD, v.HazardLightsCommand, self._hazard,
                                  True)]
        self.topics = tuple(topics)

    @property
    def sources(self) -> tuple[StackTopic, ...]:
        return tuple(t for t in self.topics if not t.state_only)

    def on_state(self, speed_mps: float, accel_mps2: float, t_ns: int) -> None:
        self.measured = Measured(speed_mps, accel_mps2, t_ns)

    def command(self, topic: StackTopic, msg) -> tuple[DriveCommand | None, str]:
        """(the command to offer the arbiter or None, the problem '' if none)."""
        result = topic.convert(msg)
        if result.controls is None or topic.state_only:
            return None, result.problem
        if topic.msg_type is VehicleControl:  # forwarded as checked, with its header
            return (DriveCommand(result.controls, conv.to_ns(msg.header.stamp),
                                 msg.header.frame_id), result.problem)
        stamp = conv.to_ns(msg.header.stamp) if hasattr(msg, "header") else 0
        frame = msg.header.frame_id if hasattr(msg, "header") else ""
        command = DriveCommand(result.controls, stamp or self.measured.t_ns, frame)
        return command, result.problem

    # ---- converters: the message's numbers, its header check, the setpoint --------------------
    def _setpoint(self, name: str, fields: dict[str, float], setpoint: Callable[[], Setpoint],
                  before: str = "") -> Validated:
        ctl = self.controllers.setdefault(name, StackController(self.model))
        return validate_setpoint(fields, lambda: ctl.step(setpoint(), self.measured),
                                 self.limits, before)

    def _header(self, header) -> str:
        return header_problem(header.frame_id, conv.to_ns(header.stamp), self.measured.t_ns,
                              self.frames, MAX_STAMP_SKEW_S)

    def _control(self, msg) -> Validated:
        """VehicleControl: pedals and steering, as the dynamics node checks them; its gear
        within int8 only (the dynamics node checks it against its gearbox, forward_gears)."""
        return validate(msg.steering_angle, msg.throttle, msg.brake, msg.clutch, msg.gear,
                        msg.handbrake, self._control_limits)

    def _twist(self, name: str, msg) -> Validated:
        """Twist or TwistStamped (a header to check) on source ``name``."""
        stamped = hasattr(msg, "twist")
        t = msg.twist if stamped else msg
        fields = {f"{name} {part}.{axis}": getattr(getattr(t, part), axis)
                  for part in ("linear", "angular") for axis in "xyz"}
        return self._setpoint(name, fields, lambda: Setpoint(
            speed_mps=t.linear.x, curvature_per_m=twist_curvature(t.linear.x, t.angular.z)),
            self._header(msg.header) if stamped else "")

    def _ackermann(self, msg) -> Validated:
        d = msg.drive
        fields = {f"ackermann_cmd drive.{k}": getattr(d, k) for k in
                  ("steering_angle", "steering_angle_velocity", "speed", "acceleration", "jerk")}
        # AckermannDrive: acceleration and steering_angle_velocity 0 mean "as quickly as
        # possible" (ackermann_msgs): the vehicle's own limits, no rate limit
        return self._setpoint("ackermann", fields, lambda: Setpoint(
            speed_mps=d.speed, accel_limit_mps2=abs(d.acceleration) or math.inf,
            steer_rad=d.steering_angle, steer_rate_radps=abs(d.steering_angle_velocity)),
            self._header(msg.header))

    def _autoware(self, msg) -> Validated:
        lon, lat = msg.longitudinal, msg.lateral
        fields = {"control_cmd longitudinal.velocity": lon.velocity,
                  "control_cmd longitudinal.acceleration": lon.acceleration,
                  "control_cmd longitudinal.jerk": lon.jerk,
                  "control_cmd lateral.steering_tire_angle": lat.steering_tire_angle,
                  "control_cmd lateral.steering_tire_rotation_rate":
                      lat.steering_tire_rotation_rate}

        def setpoint() -> Setpoint:
            rate = (abs(lat.steering_tire_rotation_rate)
                    if lat.is_defined_steering_tire_rotation_rate else 0.0)
            # Autoware's acceleration is along the direction of travel: -x in reverse (as its
            # simple_planning_simulator reads it); the controller's is along base_link x
            accel = -lon.acceleration if self.gear < 0 else lon.acceleration
            return Setpoint(speed_mps=lon.velocity, gear=self.gear,
                            accel_mps2=accel if lon.is_defined_acceleration else None,
                            steer_rad=lat.steering_tire_angle, steer_rate_radps=rate)
        stamp = header_problem("", conv.to_ns(msg.stamp), self.measured.t_ns, self.frames,
                               MAX_STAMP_SKEW_S)
        result = self._setpoint("autoware", fields, setpoint, stamp)
        if result.controls is not None and self.park:
            c = result.controls
            result = Validated(Controls(steer_rad=c.steer_rad, brake=1.0, gear=0, handbrake=True),
                               result.problem)
        return result

    def _gear(self, msg) -> Validated:
        if msg.command == AW_VEHICLE.GearCommand.NONE:  # no request: the gear stays
            return Validated(Controls(gear=self.gear))
        gear = autoware_gear(msg.command)
        if gear is None:
            return Validated(None, f"rejected: gear_cmd command {msg.command} is not a "
                                   f"GearCommand constant")
        self.gear, self.park = gear, msg.command == AW_VEHICLE.GearCommand.PARK
        return Validated(Controls(gear=self.gear))

    def _lights(self, value: int, known: tuple[int, ...], what: str) -> Validated:
        if value not in known:
            return Validated(None, f"rejected: {what} command {value} is not one of {known}")
        return Validated(Controls())

    def _turn(self, msg) -> Validated:
        c = AW_VEHICLE.TurnIndicatorsCommand
        result = self._lights(msg.command, (c.NO_COMMAND, c.DISABLE, c.ENABLE_LEFT,
                                            c.ENABLE_RIGHT), "turn_indicators_cmd")
        if result.controls is not None and msg.command != c.NO_COMMAND:
            self.turn_indicators = msg.command
        return result

    def _hazard(self, msg) -> Validated:
        c = AW_VEHICLE.HazardLightsCommand
        result = self._lights(msg.command, (c.NO_COMMAND, c.DISABLE, c.ENABLE),
                              "hazard_lights_cmd")
        if result.controls is not None and msg.command != c.NO_COMMAND:
            self.hazard_lights = msg.command
        return result
