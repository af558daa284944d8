"""Injected sensor faults through the fault book: checks, bounds of the combined faults, apply."""
import numpy as np
import pytest

from vehicle_sim.core.faults import FaultBook, FaultRequest
from vehicle_sim.core.sensors.faults import GnssFaults, ImuFaults, check_gps, check_imu


def answers(book: FaultBook, *requests: FaultRequest) -> list[str]:
    return [book.command(r, 0)[0].state for r in requests]


@pytest.mark.parametrize("first, second", [
    (FaultRequest(1, "bias_step", "accel_x", 600.0),
     FaultRequest(2, "bias_step", "accel_x", 600.0)),
    (FaultRequest(1, "bias_step", "gyro_z", -60.0), FaultRequest(2, "bias_step", "gyro_z", -60.0)),
    (FaultRequest(1, "noise_scale", value=40.0), FaultRequest(2, "noise_scale", value=40.0)),
])
def test_imu_rejects_the_command_whose_sum_with_the_active_faults_passes_the_bound(first, second):
    """Each command alone is fine; together they would pass the bound (1000 m/s^2, 100 rad/s,
    noise x 1000): the second is rejected, the first stays and the model inputs stay finite."""
    book = FaultBook("imu", check_imu)
    assert answers(book, first, second) == ["active", "rejected"]
    assert "would" in book.command(second, 0)[0].message
    faults = ImuFaults()
    faults.apply(list(book.active.values()))
    assert list(book.active) == [1]


def test_imu_sums_on_other_channels_and_a_replaced_id_do_not_count():
    book = FaultBook("imu", check_imu)
    assert answers(book, FaultRequest(1, "bias_step", "accel_x", 900.0),
                   FaultRequest(2, "bias_step", "accel_y", 900.0),
                   FaultRequest(1, "bias_step", "accel_x", -900.0),
                   FaultRequest(3, "bias_step", "accel_x", -100.0)) == ["active"] * 4
    faults = ImuFaults()
    faults.apply(list(book.active.values()))
    assert list(faults.accel_bias_step_mps2) == [-1000.0, 900.0, 0.0]


@pytest.mark.parametrize("huge", [
    FaultRequest(1, "bias_step", "accel_x", 1e308), FaultRequest(1, "noise_scale", value=1e200)])
def test_imu_a_huge_command_is_rejected_with_the_bound(huge):
    (change,) = FaultBook("imu", check_imu).command(huge, 0)
    assert change.state == "rejected" and "beyond the bound" in change.message


def test_gps_jumps_add_up_to_at_most_100_km_per_axis():
    book = FaultBook("gps", check_gps)
    near = FaultRequest(1, "position_jump", vector=(60_000.0, 0.0, 0.0))
    assert answers(book, near, FaultRequest(2, "position_jump", vector=(60_000.0, 0.0, 0.0)),
                   FaultRequest(3, "position_jump", vector=(1e308, 0.0, 0.0)),
                   FaultRequest(4, "position_jump", vector=(-20_000.0, 5.0, 0.0))) == [
        "active", "rejected", "rejected", "active"]
    (rejected,) = book.command(FaultRequest(5, "position_jump", vector=(60_001.0, 0.0, 0.0)), 0)
    assert rejected.message == ("POSITION_JUMP: the active position jumps would add up to "
                                "(100001, 5, 0) m, beyond the bound 100000 m per axis (absolute)")
    assert book.command(FaultRequest(5, "position_jump", vector=(60_000.0, 0.0, 0.0)), 0)[
        0].state == "active", "exactly at the bound"
    book.command(FaultRequest(5, "clear"), 0)
    faults = GnssFaults()
    faults.apply(list(book.active.values()))
    assert list(faults.position_jump_enu_m) == [40_000.0, 5.0, 0.0]


def test_gps_noise_scales_multiply_to_at_most_1000():
    book = FaultBook("gps", check_gps)
    assert answers(book, FaultRequest(1, "noise_scale", value=100.0),
                   FaultRequest(2, "noise_scale", value=20.0),
                   FaultRequest(3, "noise_scale", value=0.5),
                   FaultRequest(4, "noise_scale", value=20.0)) == [
        "active", "rejected", "active", "active"]
    faults = GnssFaults()
    faults.apply(list(book.active.values()))
    assert faults.noise_scale == pytest.approx(1000.0)



def test_a_scale_of_zero_does_not_let_a_huge_scale_in():
    """0 x 1e300 = 0 is within the product bound, but a CLEAR of the 0 would leave 1e300."""
    book = FaultBook("gps", check_gps)
    assert answers(book, FaultRequest(1, "noise_scale", value=0.0),
                   FaultRequest(2, "noise_scale", value=1e300)) == ["active", "rejected"]


@pytest.mark.parametrize("check, faults, kind, channel, bound, field", [
    (check_gps, GnssFaults, "noise_scale", "", 1000.0, "noise_scale"),
    (check_imu, ImuFaults, "bias_step", "accel_x", 1000.0, "accel_bias_step_mps2"),
    (check_gps, GnssFaults, "position_jump", "", 1e5, "position_jump_enu_m"),
])
def test_what_remains_after_a_clear_is_clipped_to_the_bound(check, faults, kind, channel, bound,
                                                             field):
    """+b, -b, +b (or 0, b, b for scales) are accepted one by one; clearing the middle one
    would leave 2 b (b^2): the model gets the bound."""
    values = (0.0, bound, bound) if kind == "noise_scale" else (bound, -bound, bound)
    book = FaultBook("sensor", check)
    requests = [FaultRequest(i + 1, kind, channel, v,
                             vector=(v, 0.0, 0.0) if kind == "position_jump" else (0.0, 0.0, 0.0))
                for i, v in enumerate(values)]
    clear = 1 if kind == "noise_scale" else 2
    assert answers(book, *requests, FaultRequest(clear, "clear")) == ["active"] * 3 + ["cleared"]
    model = faults()
    model.apply(list(book.active.values()))
    assert float(np.max(np.abs(getattr(model, field)))) == bound
