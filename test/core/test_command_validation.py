"""One validation path for every command source: VehicleControl fields and the stack commands
(cmd_vel, Ackermann, Autoware: the controller path) alike."""
import math

import pytest

from vehicle_sim.core.config import load
from vehicle_sim.core.controls import (
    ControlLimits, header_problem, problem_kind, validate, validate_setpoint)
from vehicle_sim.core.motion.stack_controller import (
    LongitudinalModel,
    Measured,
    Setpoint,
    StackController,
    twist_curvature,
)
from vehicle_sim.core.vehicle.interface import Controls
from vehicle_sim.core.vehicle.params import VehicleParams
from vehicle_sim.paths import config_path

LIMITS = ControlLimits(max_steer_rad=0.5, max_gear=1)
AT_REST = Measured(speed_mps=0.0, accel_mps2=0.0, t_ns=0)


def controller() -> StackController:
    return StackController(LongitudinalModel.from_vehicle(
        load(VehicleParams, config_path("vehicles/medium_car.yaml"))))


def twist(v_mps: float, yaw_rate_radps: float, measured: Measured = AT_REST):
    """A cmd_vel through the path the bridge gives it: named fields, then the controller."""
    ctl = controller()
    fields = {"cmd_vel linear.x": v_mps, "cmd_vel angular.z": yaw_rate_radps}
    return validate_setpoint(fields, lambda: ctl.step(Setpoint(
        speed_mps=v_mps, curvature_per_m=twist_curvature(v_mps, yaw_rate_radps)), measured),
        LIMITS)


@pytest.mark.parametrize("field, value", [("linear.x", math.inf), ("linear.x", -math.inf),
                                          ("linear.x", math.nan), ("angular.z", math.nan),
                                          ("angular.z", math.inf)])
def test_a_non_finite_cmd_vel_is_rejected_naming_the_field(field, value):
    """Issue 13: inf gave full throttle in gear 1, -inf full throttle in reverse, NaN a zero
    command that kept the watchdog fed."""
    v, r = (value, 0.0) if field == "linear.x" else (3.0, value)
    result = twist(v, r)
    assert result.controls is None
    assert result.problem == f"rejected: cmd_vel {field} is {value}"


def test_a_finite_cmd_vel_goes_through_the_same_limits_as_vehicle_control():
    ok = twist(4.0, 0.3)
    assert ok.controls.throttle > 0.0 and ok.controls.gear == 1 and ok.problem == ""
    sharp = twist(1.0, 5.0, Measured(1.0, 0.0, 0))
    assert sharp.controls.steer_rad == 0.5 and "steering_angle" in sharp.problem  # clamped
    reverse = twist(-2.0, 0.0)
    assert reverse.controls.gear == -1
    assert validate(math.nan, 0, 0, 0, 1, False, LIMITS).problem == \
        "rejected: steering_angle is nan"


def test_finite_inputs_that_add_up_to_a_non_finite_command_are_rejected():
    """Each field finite, the conversion not: rejected, never clamped into full lock."""
    result = validate_setpoint({"speed": 1e308}, lambda: Controls(steer_rad=math.nan), LIMITS)
    assert result.controls is None and result.problem == "rejected: its steer_rad came out as nan"
    huge = twist(1e308, 1e308)  # finite, absurd: the controller's output stays bounded
    assert huge.controls is None or (abs(huge.controls.steer_rad) <= 0.5
                                     and 0.0 <= huge.controls.throttle <= 1.0)


def test_a_problem_kind_blanks_its_values_and_keeps_its_field():
    """The bridge throttles warnings per (topic, kind): varied values of one problem are one
    kind, a different field is another (a stamp problem is not hidden by a frame one)."""
    frame = header_problem("map", 0, 0, ("", "base_link"), 1.0)
    other_frame = header_problem("odom", 0, 0, ("", "base_link"), 1.0)
    stamp = header_problem("", 110_000_000_000, 10_000_000_000, ("", "base_link"), 1.0)
    later_stamp = header_problem("", 120_500_000_000, 20_000_000_000, ("", "base_link"), 1.0)
    assert problem_kind(frame) == problem_kind(other_frame)
    assert problem_kind(stamp) == problem_kind(later_stamp)
    assert problem_kind(frame) != problem_kind(stamp)
    assert problem_kind("rejected: throttle is nan") == problem_kind("rejected: throttle is inf")
    assert problem_kind("rejected: throttle is nan") != problem_kind("rejected: brake is nan")
    assert problem_kind("rejected: gear 7 outside [-1, 1]") == "rejected: gear # outside [#, #]"
