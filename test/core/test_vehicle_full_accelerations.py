"""full14 snapshot accelerations against the motion the model integrates (what the IMU reads)."""
from pathlib import Path

import numpy as np
import pytest

from vehicle_sim.core.vehicle.factory import make_model
from vehicle_sim.core.vehicle.full14.corners import rotation
from vehicle_sim.core.vehicle.full14.state_layout import O_AX, X_P, X_VX
from vehicle_sim.core.vehicle.interface import Controls
from vehicle_sim.core.vehicle.params import load_vehicle

CAR = load_vehicle(Path(__file__).resolve().parents[2] / "config" / "vehicles" / "medium_car.yaml")
DT_S = 1e-3
# The snapshot reports the mean over the last step by definition, so only round-off separates it
# from (v_k+1 - v_k) / dt: eps |v| / dt ~ 2e-16 * 5 m/s / 1 ms ~ 1e-12. 1e-9 leaves 1000x
# headroom and is 1e8 below the defect it guards (0.13 m/s^2 from dx/dt at the post-step state).
ROUND_OFF_MPS2 = 1e-9
ROUND_OFF_RADPS2 = 1e-9


def launch_in_a_turn(model, steps: int):
    """Yield (state before, state after, snapshot) of a 0.5-throttle launch from rest that steers
    0.15 rad from 3 s on: the slipping clutch chatters there (1st gear, ~3.5 m/s)."""
    for i in range(steps):
        before = model.state
        model.step(Controls(throttle=0.5, steer_rad=0.15 if i > 3000 else 0.0), DT_S)
        yield before, model.state, model.snapshot()


@pytest.mark.parametrize("integrator", ["rk4", "euler"])
def test_snapshot_accelerations_are_the_velocity_change_over_the_step(integrator):
    """Linear (world frame, inertial) and angular accelerations equal the finite difference of
    the velocity states over the step just taken, from launch through the turn."""
    model = make_model("full14", CAR, integrator)
    worst_mps2 = worst_radps2 = 0.0
    for before, after, snap in launch_in_a_turn(model, 5500):
        dv_world = (after[X_VX:X_VX + 3] - before[X_VX:X_VX + 3]) / DT_S
        reported_world = rotation(*snap.rpy_rad) @ snap.acceleration_mps2
        dw_body = (after[X_P:X_P + 3] - before[X_P:X_P + 3]) / DT_S
        worst_mps2 = max(worst_mps2, np.abs(reported_world - dv_world).max())
        worst_radps2 = max(worst_radps2, np.abs(snap.angular_acceleration_radps2 - dw_body).max())
    assert worst_mps2 < ROUND_OFF_MPS2
    assert worst_radps2 < ROUND_OFF_RADPS2


def test_snapshot_accelerations_without_a_step_are_the_derivative():
    """After a reset (no step since), the accelerations are dx/dt at the state: at rest ~0,
    not the stale mean of the steps before the reset."""
    model = make_model("full14", CAR, "rk4")
    for _ in launch_in_a_turn(model, 200):
        pass
    model.reset(0.0, 0.0, 0.4, 0.0)
    snap = model.snapshot()
    dx, out = model.outputs()
    rot = rotation(*snap.rpy_rad)
    assert np.array_equal(snap.acceleration_mps2, rot.T @ out[O_AX:O_AX + 3])
    assert np.array_equal(snap.angular_acceleration_radps2, dx[X_P:X_P + 3])
    assert np.abs(snap.acceleration_mps2).max() < 0.05  # equilibrium start
