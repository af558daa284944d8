"""The stack commands' converters (nodes.stack_inputs) on messages of the stacks' own types, without
DDS: what each field means in the stack's convention."""
from __future__ import annotations

import pytest

from vehicle_sim.core.config import load
from vehicle_sim.paths import config_path

pytest.importorskip("ackermann_msgs.msg", reason="the set-up builds ackermann_msgs")
pytest.importorskip("autoware_control_msgs.msg", reason="the set-up builds Autoware's msgs")


def test_autoware_acceleration_is_along_the_direction_of_travel_in_reverse():
    """Autoware's longitudinal.acceleration is positive in the direction of travel (its
    simple_planning_simulator negates it in REVERSE): +1 m/s^2 in reverse from rest drives
    backwards, it does not brake."""
    from autoware_control_msgs.msg import Control
    from autoware_vehicle_msgs.msg import GearCommand

    from vehicle_sim.core.controls import ControlLimits
    from vehicle_sim.core.vehicle.params import VehicleParams
    from vehicle_sim.nodes.stack_inputs import StackInputs
    inputs = StackInputs(load(VehicleParams, config_path("vehicles/medium_car.yaml")),
                         ControlLimits(0.5, 1), lambda line: None)
    topic = {t.name: t for t in inputs.topics}
    inputs.command(topic["gear"], GearCommand(command=GearCommand.REVERSE))
    out = []
    for k, speed in enumerate((0.0, -0.5, -1.0)):  # at rest, then rolling backwards
        inputs.on_state(speed, 0.0, (k + 1) * 10_000_000)
        cmd = Control()
        cmd.stamp.nanosec = (k + 1) * 10_000_000
        cmd.longitudinal.velocity, cmd.longitudinal.acceleration = -2.0, 1.0
        cmd.longitudinal.is_defined_acceleration = True
        command, problem = inputs.command(topic["autoware"], cmd)
        out.append(command.values)
    assert all(c.gear == -1 and c.throttle > 0.0 and c.brake == 0.0 for c in out), out


def test_ackermann_acceleration_zero_means_as_quickly_as_possible():
    """ackermann_msgs: acceleration 0 is no limit (the vehicle's own), not a comfort default."""
    from ackermann_msgs.msg import AckermannDriveStamped

    from vehicle_sim.core.controls import ControlLimits
    from vehicle_sim.core.vehicle.params import VehicleParams
    from vehicle_sim.nodes.stack_inputs import StackInputs

    def first_throttle(accel_mps2: float) -> float:
        inputs = StackInputs(load(VehicleParams, config_path("vehicles/medium_car.yaml")),
                             ControlLimits(0.5, 1), lambda line: None)
        inputs.on_state(0.0, 0.0, 10_000_000)
        msg = AckermannDriveStamped()
        msg.header.frame_id = "base_link"
        msg.header.stamp.nanosec = 10_000_000
        msg.drive.speed, msg.drive.acceleration = 10.0, accel_mps2
        topic = next(t for t in inputs.topics if t.name == "ackermann")
        return inputs.command(topic, msg)[0].values.throttle
    assert first_throttle(0.0) == 1.0 > first_throttle(3.0)
