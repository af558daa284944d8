"""One validation path for every command source: VehicleControl fields and cmd_vel alike."""
import math

import pytest

from vehicle_sim.core.controls import ControlLimits, validate, validate_twist

LIMITS = ControlLimits(max_steer_rad=0.5, max_gear=1)
WHEELBASE_M = 2.7


@pytest.mark.parametrize("field, value", [("linear.x", math.inf), ("linear.x", -math.inf),
                                          ("linear.x", math.nan), ("angular.z", math.nan),
                                          ("angular.z", math.inf)])
def test_a_non_finite_cmd_vel_is_rejected_naming_the_field(field, value):
    """Issue 13: inf gave full throttle in gear 1, -inf full throttle in reverse, NaN a zero
    command that kept the watchdog fed."""
    v, r = (value, 0.0) if field == "linear.x" else (3.0, value)
    result = validate_twist(v, r, speed_mps=0.0, wheelbase_m=WHEELBASE_M, limits=LIMITS)
    assert result.controls is None
    assert result.problem == f"rejected: cmd_vel {field} is {value}"


def test_a_finite_cmd_vel_goes_through_the_same_limits_as_vehicle_control():
    ok = validate_twist(4.0, 0.3, speed_mps=0.0, wheelbase_m=WHEELBASE_M, limits=LIMITS)
    assert ok.controls.throttle > 0.0 and ok.controls.gear == 1 and ok.problem == ""
    sharp = validate_twist(1.0, 5.0, speed_mps=1.0, wheelbase_m=WHEELBASE_M, limits=LIMITS)
    assert sharp.controls.steer_rad == 0.5 and "steering_angle" in sharp.problem  # clamped
    reverse = validate_twist(-2.0, 0.0, speed_mps=0.0, wheelbase_m=WHEELBASE_M, limits=LIMITS)
    assert reverse.controls.gear == -1
    assert validate(math.nan, 0, 0, 0, 1, False, LIMITS).problem == \
        "rejected: steering_angle is nan"
