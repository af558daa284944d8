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
                         ControlLimits(0.5, 1), lambda line: None, "base_link")
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
                             ControlLimits(0.5, 1), lambda line: None, "base_link")
        inputs.on_state(0.0, 0.0, 10_000_000)
        msg = AckermannDriveStamped()
        msg.header.frame_id = "base_link"
        msg.header.stamp.nanosec = 10_000_000
        msg.drive.speed, msg.drive.acceleration = 10.0, accel_mps2
        topic = next(t for t in inputs.topics if t.name == "ackermann")
        return inputs.command(topic, msg)[0].values.throttle
    assert first_throttle(0.0) == 1.0 > first_throttle(3.0)


def inputs_and_topics():
    from vehicle_sim.core.controls import ControlLimits
    from vehicle_sim.core.vehicle.params import VehicleParams
    from vehicle_sim.nodes.stack_inputs import StackInputs
    inputs = StackInputs(load(VehicleParams, config_path("vehicles/medium_car.yaml")),
                         ControlLimits(0.5, 1), lambda line: None, "base_link")
    inputs.on_state(0.0, 0.0, 10_000_000)
    return inputs, {t.name: t for t in inputs.topics}


@pytest.mark.parametrize("part, axis", [(p, a) for p in ("linear", "angular") for a in "xyz"])
@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_a_non_finite_twist_field_rejects_the_command_even_one_it_does_not_use(part, axis, bad):
    from geometry_msgs.msg import Twist
    inputs, topic = inputs_and_topics()
    msg = Twist()
    msg.linear.x = 2.0
    setattr(getattr(msg, part), axis, bad)
    command, problem = inputs.command(topic["cmd_vel"], msg)
    assert command is None and problem == f"rejected: cmd_vel {part}.{axis} is {bad}", problem
    msg = Twist()
    msg.linear.x = 2.0
    assert inputs.command(topic["cmd_vel"], msg)[0] is not None  # the same, finite: taken


def test_a_non_finite_jerk_rejects_ackermann_and_autoware_commands():
    from ackermann_msgs.msg import AckermannDriveStamped
    from autoware_control_msgs.msg import Control
    inputs, topic = inputs_and_topics()
    ack = AckermannDriveStamped()
    ack.drive.speed, ack.drive.jerk = 5.0, float("nan")
    assert inputs.command(topic["ackermann"], ack) == (
        None, "rejected: ackermann_cmd drive.jerk is nan")
    aw = Control()
    aw.longitudinal.velocity, aw.longitudinal.jerk = 5.0, float("-inf")
    assert inputs.command(topic["autoware"], aw) == (
        None, "rejected: control_cmd longitudinal.jerk is -inf")


def test_autonomy_control_is_checked_as_the_dynamics_node_checks_it_before_it_is_forwarded():
    """A command the dynamics node would reject is not forwarded (nor recorded on
    vehicle/control); out-of-range pedals and steering go on clamped, with the header."""
    from vehicle_sim.msg import VehicleControl
    inputs, topic = inputs_and_topics()
    for field, bad in (("steering_angle", float("nan")), ("throttle", float("inf")),
                       ("brake", float("-inf")), ("clutch", float("nan"))):
        msg = VehicleControl(gear=1)
        setattr(msg, field, bad)
        assert inputs.command(topic["autonomy"], msg) == (None, f"rejected: {field} is {bad}")
    # the gear is the dynamics node's to check (its gearbox): forwarded, as a manual box's 5th
    assert inputs.command(topic["autonomy"], VehicleControl(gear=5))[0].values.gear == 5
    assert inputs.command(topic["autonomy"], VehicleControl(gear=-2)) == (
        None, "rejected: gear -2 outside [-1, 127]")
    msg = VehicleControl(throttle=1.5, steering_angle=-2.0, gear=1)
    msg.header.frame_id, msg.header.stamp.sec = "base_link", 7
    command, problem = inputs.command(topic["autonomy"], msg)
    assert (command.values.throttle, command.values.steer_rad) == (1.0, -0.5), command
    assert (command.stamp_ns, command.frame_id) == (7_000_000_000, "base_link")
    assert problem == "throttle 1.5 clamped to [0, 1]; steering_angle -2 rad clamped to +-0.5"


@pytest.mark.parametrize("base_frame", ["base_link", "ego/base_link"])
def test_a_stamped_command_is_taken_in_the_bridges_base_frame_only(base_frame):
    """The bridge's base_frame (the dynamics node's, scenario_check holds them to one): a
    TwistStamped in it (or in '') drives, one in another frame is refused naming both."""
    from geometry_msgs.msg import TwistStamped

    from vehicle_sim.core.controls import ControlLimits
    from vehicle_sim.core.vehicle.params import VehicleParams
    from vehicle_sim.nodes.stack_inputs import StackInputs
    inputs = StackInputs(load(VehicleParams, config_path("vehicles/medium_car.yaml")),
                         ControlLimits(0.5, 1), lambda line: None, base_frame)
    inputs.on_state(0.0, 0.0, 10_000_000)
    topic = next(t for t in inputs.topics if t.name == "cmd_vel_stamped")

    def send(frame: str):
        msg = TwistStamped()
        msg.header.frame_id, msg.header.stamp.nanosec = frame, 10_000_000
        msg.twist.linear.x = 3.0
        return inputs.command(topic, msg)

    for frame in (base_frame, ""):
        command, problem = send(frame)
        assert problem == "" and command.values.throttle > 0.0, (frame, problem)
    other = "base_link" if base_frame != "base_link" else "ego/base_link"
    command, problem = send(other)
    assert command is None or command.values.throttle == 0.0
    assert f"frame_id {other!r} is not one of ['', {base_frame!r}]" in problem, problem
