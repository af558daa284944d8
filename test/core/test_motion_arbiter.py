"""Command arbitration: the active source, what is published when, the driver's command."""
import pytest

from vehicle_sim.core.controls import DriveCommand
from vehicle_sim.core.motion.arbiter import (
    ENGAGE_BRAKE,
    HELD,
    ArbiterParams,
    CommandArbiter,
    StackInput,
)
from vehicle_sim.core.motion.params import FfbParams, InputParams, MuxParams
from vehicle_sim.core.motion.steering import SteeringBridge
from vehicle_sim.core.vehicle.interface import Controls

DT = 0.002  # 500 Hz platform loop
INPUTS = InputParams()
AUTONOMY = (StackInput("autonomy", 0.5),)
AUTO = DriveCommand(Controls(throttle=0.3, steer_rad=0.1, gear=1), stamp_ns=7, frame_id="stack")


def arbiter(stack=AUTONOMY, fallback=True, forward=False, every=5):
    steering = SteeringBridge(INPUTS, MuxParams(), FfbParams())
    params = ArbiterParams(stack_inputs=stack, driver_fallback=fallback,
                           forward_on_receipt=forward, publish_every=every, steering_ratio=15.0,
                           max_gear=3)
    return CommandArbiter(params, steering)


def rig(a: CommandArbiter, t: float, throttle=65535.0, buttons=0) -> None:
    """One rig input at time t: wheel centred, throttle raw count, a button bitmask."""
    a.steering.on_raw(t, 0.0, throttle, -32767.0, -32767.0, buttons)


def run(a: CommandArbiter, t0: float, cycles: int, stamp_ns=0):
    return [a.cycle(t0 + k * DT, 0.0, stamp_ns)[1] for k in range(cycles)]


def test_nothing_fresh_is_none_and_publishes_nothing():
    decisions = run(arbiter(), 0.0, 20)
    assert decisions[0].source == "none" and decisions[0].changed
    assert all(d.command is None for d in decisions)
    assert not any(d.changed for d in decisions[1:])


def test_fresh_stack_command_drives_and_is_republished_at_the_control_rate():
    a = arbiter(every=5)
    assert not a.offer("autonomy", AUTO, 0.0), "realtime: the loop publishes, not the receipt"
    decisions = run(a, 0.0, 11)
    assert [d.source for d in decisions] == ["autonomy"] * 11
    published = [k for k, d in enumerate(decisions) if d.command is not None]
    assert published == [0, 5, 10] and decisions[0].command == AUTO  # passed through unchanged
    late = run(a, 0.5 + 1e-6, 6, stamp_ns=9)
    assert late[0].source == "none" and late[0].changed
    # the stack went stale: the safe command once (the last one would drive on until the
    # dynamics node's watchdog), then nothing
    safe = late[0].command.values
    assert (safe.throttle, safe.brake, safe.steer_rad) == (0.0, 1.0, AUTO.values.steer_rad)
    assert late[0].command.stamp_ns == 9 and all(d.command is None for d in late[1:])


def test_driver_fallback_then_takeover_keeps_the_driver_over_a_fresh_stack():
    a = arbiter()
    rig(a, 0.0)
    first = a.cycle(0.0, 0.0, stamp_ns=123)[1]
    assert first.source == "driver" and first.reason == HELD  # brake to engage
    assert (first.command.values.throttle, first.command.values.brake) == (0.0, 1.0)
    assert first.command.stamp_ns == 123 and first.command.values.gear == 1
    a.steering.on_raw(DT / 2, 0.0, 0.0, 65535.0, 0.0, 0)  # the brake pedal
    a.cycle(DT / 2, 0.0, 0)
    rig(a, DT / 2)  # then the throttle, as the driver gives it
    engaged = a.cycle(DT / 2, 0.0, 0)[1]
    assert engaged.source == "driver" and not engaged.changed
    assert a.driver_command.values.throttle == 1.0
    a.offer("autonomy", AUTO, DT)
    assert a.cycle(DT, 0.0, 0)[1].source == "autonomy"
    rig(a, 2 * DT, buttons=1 << INPUTS.takeover)
    took = a.cycle(2 * DT, 0.0, 0)[1]
    assert (took.source, took.changed, took.reason) == ("driver", True, "takeover button")
    a.offer("autonomy", AUTO, 3 * DT)
    assert a.cycle(3 * DT, 0.0, 0)[1].source == "driver"
    stale = a.cycle(3 * DT + INPUTS.input_timeout_s + DT, 0.0, 0)[1]
    assert stale.source == "none", "no fallback to the stack"
    assert stale.command.values.brake == 1.0 and stale.command.values.throttle == 0.0


def test_without_fallback_the_rig_drives_only_after_a_takeover():
    a = arbiter(fallback=False)
    rig(a, 0.0)
    assert a.cycle(0.0, 0.0, 0)[1].source == "none"


def test_forward_on_receipt_unless_the_driver_drives_and_the_loop_does_not_repeat():
    a = arbiter(forward=True)
    assert a.offer("autonomy", AUTO, 0.0)
    decisions = run(a, 0.0, 10)
    assert decisions[0].source == "autonomy" and all(d.command is None for d in decisions)
    rig(a, 10 * DT, buttons=1 << INPUTS.takeover)
    assert a.cycle(10 * DT, 0.0, 0)[1].source == "driver"
    assert not a.offer("autonomy", AUTO, 11 * DT)


def test_stack_inputs_in_priority_order_and_each_forwarded_only_when_it_drives():
    a = arbiter(stack=(StackInput("autonomy", 0.5), StackInput("ackermann", 0.2)), forward=True)
    other = DriveCommand(Controls(throttle=0.9))
    assert a.offer("ackermann", other, 0.0)
    assert a.cycle(0.0, 0.0, 0)[1].source == "ackermann"
    a.offer("autonomy", AUTO, DT)
    assert not a.offer("ackermann", other, DT), "a lower entry while one above is fresh"
    assert a.cycle(2 * DT, 0.0, 0)[1].source == "autonomy"


def test_paddles_step_the_gear_within_reverse_and_max_gear_and_steering_uses_the_ratio():
    a = arbiter()
    t, gears = 0.0, []
    for bit in [INPUTS.gear_up] * 4 + [INPUTS.gear_down] * 6:
        for buttons in (1 << bit, 0):  # press, release: one rising edge
            rig(a, t, buttons=buttons)
            a.cycle(t, 0.0, 0)
            gears.append(a.driver_command.values.gear)
            t += DT
    assert gears[::2] == [2, 3, 3, 3, 2, 1, 0, -1, -1, -1] and gears[1::2] == gears[::2]
    a.steering.on_raw(t, 32767.0, 0.0, -32767.0, -32767.0, 0)  # full lock left
    a.cycle(t, 0.0, 0)
    full_lock_rad = 0.5 * INPUTS.handwheel_range_rad
    assert a.driver_command.values.steer_rad == pytest.approx(full_lock_rad / 15.0)


def test_stack_input_names_must_not_shadow_the_fixed_sources():
    for names in (("driver",), ("none",), ("a", "a")):
        with pytest.raises(ValueError, match="stack input names"):
            arbiter(stack=tuple(StackInput(n, 0.5) for n in names))


@pytest.mark.parametrize("forward", [False, True])
def test_estop_brakes_whatever_the_sources_send_until_cleared(forward):
    a = arbiter(forward=forward)
    a.offer("autonomy", AUTO, 0.0)
    before = run(a, 0.0, 5, stamp_ns=3)
    assert before[0].source == "autonomy"
    a.estop()
    assert not a.offer("autonomy", AUTO, 0.01), "no stack command forwarded under the e-stop"
    rig(a, 0.01)  # the driver presses the throttle too
    held = run(a, 0.01, 10, stamp_ns=4)
    assert held[0].source == "estop" and held[0].changed
    sent = [d.command for d in held if d.command is not None]
    assert len(sent) == 2 and all(
        c.values.brake == 1.0 and c.values.throttle == 0.0 and c.stamp_ns == 4 for c in sent)
    # the steering stays where the last command that went out left it
    assert sent[0].values.steer_rad == AUTO.values.steer_rad
    a.clear_estop()
    a.offer("autonomy", AUTO, 0.03)
    after = run(a, 0.03, 3)
    assert after[0].source == "autonomy" and after[0].changed


def published(decisions) -> list:
    return [d.command.values for d in decisions if d.command is not None]


def test_a_takeover_holds_while_the_rig_is_silent_no_stack_command_is_forwarded():
    """fast / lockstep: the driver took over, the rig's input goes stale (source none) while
    the stack keeps sending: nothing of the stack's goes out until a hand-back."""
    a = arbiter(forward=True, fallback=False)
    assert a.offer("autonomy", AUTO, 0.0)
    rig(a, DT, buttons=1 << INPUTS.takeover)
    assert a.cycle(DT, 0.0, 0)[1].source == "driver"
    gap = DT + INPUTS.input_timeout_s + DT
    assert a.cycle(gap, 0.0, 0)[1].source == "none"
    assert not a.offer("autonomy", AUTO, gap), "a takeover is not undone by a rig gap"


def test_a_rig_going_silent_sends_the_safe_command_once():
    a = arbiter(fallback=False)
    rig(a, 0.0, buttons=1 << INPUTS.takeover)
    assert a.cycle(0.0, 0.0, 0)[1].command.values.throttle == 1.0  # took over: as it is
    out = run(a, INPUTS.input_timeout_s + DT, 10)
    assert out[0].source == "none" and published(out) == [
        Controls(steer_rad=0.0, throttle=0.0, brake=1.0, gear=1)]


def test_after_an_estop_the_floored_pedal_is_held_and_old_stack_commands_are_dropped():
    """E-stop; the driver takes over and floors the throttle; the clear does not launch the
    car: held at full brake until the brake pedal; a stack command from before the clear
    does not drive either."""
    a = arbiter(fallback=False)
    a.offer("autonomy", AUTO, 0.0)
    a.estop()
    rig(a, DT, buttons=1 << INPUTS.takeover)
    assert a.cycle(DT, 0.0, 0)[1].source == "estop"
    a.clear_estop()
    rig(a, 2 * DT)
    after = run(a, 2 * DT, 5)
    assert after[0].source == "driver" and after[0].reason == HELD
    assert all(c.throttle == 0.0 and c.brake == 1.0 for c in published(after))

    def pedals(t: float, throttle: float, brake: float) -> list:
        a.steering.on_raw(t, 0.0, throttle * 65535.0, brake * 65535.0, 0.0, 0)
        return published(run(a, t, 5))
    assert all(c.throttle == 0.0 for c in pedals(3 * DT, 1.0, 1.0)), "floored: a brake tap"
    assert all(c.throttle == 0.0 for c in pedals(4 * DT, 1.0, 0.0)), "... does not launch it"
    assert all(c.throttle == 0.0 for c in pedals(5 * DT, 0.0, ENGAGE_BRAKE / 2)), "a touch"
    assert pedals(6 * DT, 0.0, 1.0)[0].brake == 1.0  # released and braked: engaged
    assert pedals(7 * DT, 1.0, 0.0)[-1].throttle == 1.0 and a.source == "driver"


def test_after_an_estop_only_stack_commands_from_after_the_clear_drive():
    a = arbiter(fallback=False)
    a.offer("autonomy", AUTO, 0.0)
    a.estop()
    run(a, 0.0, 3)
    a.clear_estop()
    assert run(a, DT, 3)[0].source == "none"
    a.offer("autonomy", AUTO, 2 * DT)
    assert run(a, 2 * DT, 1)[0].source == "autonomy"


def test_a_fallback_to_an_idle_rig_brakes_instead_of_coasting():
    a = arbiter(fallback=True)
    a.offer("autonomy", AUTO, 0.0)
    run(a, 0.0, 3)
    a.steering.on_raw(0.5, 0.0, 0.0, 0.0, 0.0, 0)  # the rig at rest
    out = run(a, 0.5 + DT, 20)
    assert out[0].source == "driver" and out[0].reason == HELD
    assert published(out) and all(c.brake == 1.0 and c.throttle == 0.0
                                  for c in published(out))


def test_forwarded_on_receipt_a_stale_stack_is_left_to_the_dynamics_watchdog():
    """fast / lockstep: no brake from the wall-clock loop lands in a frame no run repeats."""
    a = arbiter(forward=True, fallback=False)
    assert a.offer("autonomy", AUTO, 0.0)
    out = run(a, 0.5 + DT, 5)
    assert out[0].source == "none" and published(out) == []


def test_the_takeover_button_engages_a_held_driver_whose_takeover_holds():
    """The driver took over; the rig's input had a gap: held. The takeover button (the latch
    is on the driver already) engages, the throttle released."""
    a = arbiter(fallback=False)
    rig(a, 0.0, buttons=1 << INPUTS.takeover)
    a.cycle(0.0, 0.0, 0)
    gap = INPUTS.input_timeout_s + DT
    assert a.cycle(gap, 0.0, 0)[1].source == "none"
    a.steering.on_raw(gap, 0.0, 0.0, 0.0, 0.0, 0)
    back = a.cycle(gap, 0.0, 0)[1]
    assert back.source == "driver" and back.reason == HELD
    a.steering.on_raw(gap + DT, 0.0, 0.0, 0.0, 0.0, 1 << INPUTS.takeover)
    a.cycle(gap + DT, 0.0, 0)
    rig(a, gap + 2 * DT)
    assert published(run(a, gap + 2 * DT, 6))[-1].throttle == 1.0


def test_the_safe_command_keeps_the_gear_of_the_last_command_sent():
    """A stack reversing (gear -1) goes stale: full brake in reverse, no shift to forward."""
    a = arbiter()
    reverse = DriveCommand(Controls(throttle=0.3, gear=-1))
    a.offer("autonomy", reverse, 0.0)
    run(a, 0.0, 3)
    out = run(a, 0.5 + DT, 3)
    assert out[0].source == "none" and published(out)[0].gear == -1
