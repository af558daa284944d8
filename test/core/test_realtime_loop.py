"""The fixed-step loop without ROS: absolute deadlines, overruns, pause/step, watchdog, lockstep."""
from __future__ import annotations

import re
import threading
from pathlib import Path

import numpy as np
import pytest

from vehicle_sim.core.controls import CommandWatchdog, ControlLimits, validate
from vehicle_sim.core.dynamics_params import DynamicsParams
from vehicle_sim.core.realtime import FrameQueue, LatenessWindow, LockstepBarrier, Pacer
from vehicle_sim.core.sim_loop import Hooks, SimLoop
from vehicle_sim.core.vehicle.factory import make_model
from vehicle_sim.core.vehicle.interface import Controls, NonFiniteState
from vehicle_sim.core.vehicle.params import load_vehicle

CAR = Path(__file__).resolve().parents[2] / "config" / "vehicles" / "medium_car.yaml"


class FakeClock:
    """Wall clock under test control; sleep advances it (optionally oversleeping)."""

    def __init__(self, oversleep_s: float = 0.0):
        self.now, self.oversleep = 100.0, oversleep_s

    def __call__(self) -> float:
        return self.now

    def sleep(self, dt: float) -> None:
        self.now += dt + self.oversleep


def test_pacer_uses_absolute_deadlines_so_lateness_does_not_accumulate():
    clock = FakeClock(oversleep_s=0.0002)
    pacer = Pacer(0.001, clock=clock, sleep=clock.sleep)
    start = clock.now
    for _ in range(1000):
        clock.now += 0.0003  # work of the step
        lateness = pacer.wait()
    assert lateness == pytest.approx(0.0002, abs=1e-9)
    assert clock.now - start == pytest.approx(1.0 + 0.0002, abs=1e-6)  # no drift over 1000 steps
    assert pacer.overruns == 0


def test_pacer_counts_overruns_and_scales_with_real_time_factor():
    clock = FakeClock()
    pacer = Pacer(0.001, real_time_factor=2.0, clock=clock, sleep=clock.sleep)
    assert pacer.wall_period_s == pytest.approx(0.0005)
    clock.now += 0.0021  # a step that took four wall periods
    assert pacer.wait() > pacer.wall_period_s and pacer.overruns == 1
    with pytest.raises(ValueError):
        pacer.set_real_time_factor(0.0)


def test_lateness_window_percentiles():
    window = LatenessWindow(capacity=100)
    for i in range(200):
        window.add(float(i))
    p50, p99, worst = window.percentiles()
    assert worst == 199.0 and p50 == pytest.approx(149.5) and 197 < p99 < 199


def test_lockstep_barrier_waits_for_every_peer():
    barrier = LockstepBarrier(("traffic", "gps"))
    assert not barrier.wait_for(10, timeout_s=0.01)
    barrier.ack("traffic", 10)
    assert barrier.stalled(10) == ["gps"] and barrier.ack("stranger", 10) == "unknown peer"
    barrier.ack("gps", 10)
    assert barrier.wait_for(10, timeout_s=0.01)


def test_lockstep_barrier_also_waits_for_the_announced_command():
    """An ack may overtake the command its peer sent before it (other topic): the frame ends
    only once that command is in; an older command does not count."""
    barrier = LockstepBarrier(("ego",))
    barrier.ack("ego", 20, command_ns=20)
    assert not barrier.wait_for(20, timeout_s=0.01)
    assert "the vehicle command" in barrier.stalled(20)[0]
    barrier.command_received(10)
    assert not barrier.wait_for(20, timeout_s=0.01)
    barrier.command_received(20)
    assert barrier.wait_for(20, timeout_s=0.01) and barrier.stalled(20) == []


def test_lockstep_barrier_refuses_acks_from_the_future():
    """A peer cannot finish a frame, or send a command, after the loop's simulation time: such
    an ack would release frames nobody finished, or stall the run for good (issue 13)."""
    now = [20]
    barrier = LockstepBarrier(("ego",), now_ns=lambda: now[0])
    assert "implausible" in barrier.ack("ego", 2**60)
    assert "implausible" in barrier.ack("ego", 20, command_ns=2**60)
    assert not barrier.wait_for(20, timeout_s=0.01)  # neither was recorded
    assert barrier.ack("ego", 20, command_ns=20) is None
    barrier.command_received(20)
    assert barrier.wait_for(20, timeout_s=0.01)
    now[0] = 30
    assert barrier.ack("ego", 30) is None and barrier.wait_for(30, timeout_s=0.01)


def test_frame_queue_processes_in_order_when_ready_and_flags_repeats():
    done: list[int] = []
    inputs = {"state": 0}
    frames = FrameQueue(lambda t: inputs["state"] >= t, done.append)
    assert frames.tick(10) and frames.tick(20) and done == [] and frames.waiting == 2
    assert not frames.tick(20) and not frames.tick(10), "repeats are not queued twice"
    inputs["state"] = 10
    frames.pump()
    assert done == [10] and frames.waiting == 1
    inputs["state"] = 30
    assert frames.tick(30) and done == [10, 20, 30]


def test_command_validation_policy():
    limits = ControlLimits(max_steer_rad=0.5, max_gear=1)
    assert validate(float("nan"), 0, 0, 0, 1, False, limits).controls is None
    assert validate(0.0, float("inf"), 0, 0, 1, False, limits).controls is None
    assert validate(0.0, 0.1, 0, 0, 3, False, limits).controls is None
    clamped = validate(2.0, 1.5, -1.0, 0.0, 1, False, limits)
    assert clamped.controls.steer_rad == 0.5 and clamped.controls.throttle == 1.0
    assert clamped.controls.brake == 0.0 and "clamped" in clamped.problem


def test_watchdog_expires_and_brakes():
    dog = CommandWatchdog(timeout_s=0.5, brake=0.8)
    assert dog.expired(0)
    dog.feed(1_000_000_000)
    assert not dog.expired(1_400_000_000) and dog.expired(1_600_000_000)
    assert dog.safe(Controls(throttle=1.0, steer_rad=0.1)) == Controls(steer_rad=0.1, brake=0.8)


class RecordingModel:
    """Counts steps and records the controls it was given."""

    name = "recording"

    def __init__(self):
        self.controls: list[Controls] = []
        self.resets = 0

    def reset(self, *pose):
        self.resets += 1

    def step(self, controls, dt_s):
        self.controls.append(controls)

    def snapshot(self):
        raise NotImplementedError


def test_sim_loop_watchdog_pause_step_and_deterministic_time():
    model = RecordingModel()
    params = DynamicsParams(mode="fast", command_timeout_s=0.002)
    loop = SimLoop(model, params)
    for _ in range(3):
        loop.step()
    assert all(c.brake == 1.0 for c in model.controls), "brakes before the first command"
    loop.set_command(Controls(throttle=0.4))
    loop.step()
    assert model.controls[-1].throttle == 0.4 and not loop.command_timeout
    for _ in range(3):
        loop.step()
    assert loop.command_timeout and model.controls[-1].throttle == 0.0
    assert loop.t_ns == 7 * 1_000_000

    stop, ticks = threading.Event(), []
    loop.pause(True)
    hooks = Hooks(after_step=lambda k, t: ticks.append(t), status=lambda s: None)
    thread = threading.Thread(target=loop.run, args=(stop, hooks))
    thread.start()
    loop.request_steps(2)
    for _ in range(200):
        if len(ticks) >= 2:
            break
        threading.Event().wait(0.01)
    stop.set()
    thread.join(timeout=2)
    assert ticks == [8_000_000, 9_000_000]


def test_a_real_time_loop_reports_its_status_at_the_runs_end():
    """A run's summary ends on a status at its duration (nodes.monitor_node): in real time too,
    where the statuses otherwise follow the wall-clock period (0.2 Hz here: none in between)."""
    loop = SimLoop(RecordingModel(), DynamicsParams(mode="realtime", status_rate_hz=0.2,
                                                    duration=1.0))
    stop, times = threading.Event(), []
    hooks = Hooks(after_step=lambda k, t: None,
                  status=lambda s: times.append(round(s.sim_time_s * 1e9)))
    thread = threading.Thread(target=loop.run, args=(stop, hooks))
    thread.start()
    for _ in range(300):
        if loop.at_end and len(times) >= 2:
            break
        threading.Event().wait(0.01)
    stop.set()
    thread.join(timeout=30)
    assert not thread.is_alive()
    assert times == [0, 1_000_000_000], times


def test_a_loop_with_a_duration_holds_at_it():
    """The run's end (DynamicsParams.duration): not a step beyond it, however long the run
    takes to stop (a 60 s fast run had simulated 99 s by the time its nodes were stopped)."""
    loop = SimLoop(RecordingModel(), DynamicsParams(mode="fast", duration=0.2405))
    stop, ticks = threading.Event(), []
    hooks = Hooks(after_step=lambda k, t: ticks.append(t), status=lambda s: None)
    thread = threading.Thread(target=loop.run, args=(stop, hooks))
    thread.start()
    for _ in range(400):
        if loop.at_end:
            break
        threading.Event().wait(0.01)
    threading.Event().wait(0.2)  # a fast loop would have gone on by thousands of steps
    stop.set()
    thread.join(timeout=5)
    assert not thread.is_alive()
    # 0.2405 s is no state's time: the end is the next state period's (100 Hz), 0.25 s, so the
    # state of the end is published (the monitor ends the run on it: a 2.005 s run hung)
    assert loop.at_end and loop.k == 250 and ticks[-1] == 250_000_000 and len(ticks) == 250


@pytest.mark.parametrize("fields, words", [
    ({}, "needs lockstep_peers"),
    ({"lockstep_peers": ("a",), "lockstep_frame_steps": 15}, "between two vehicle/state"),
    ({"lockstep_peers": ("a",), "clock_decimation": 4}, "multiple of clock_decimation 4"),
    ({"lockstep_peers": ("a",), "raw_state_decimation": 3}, "raw_state_decimation 3"),
    ({"lockstep_peers": ("a",), "raw_state_decimation": 0}, "raw_state_decimation > 0"),
])
def test_lockstep_frames_that_a_peer_could_never_acknowledge_are_refused(fields, words):
    """Peers acknowledge a frame once its /clock tick and its states are in: a frame whose end
    gets no tick or no state would stall the run forever."""
    with pytest.raises(ValueError, match=words):
        DynamicsParams(mode="lockstep", **{"lockstep_frame_steps": 10} | fields)
    DynamicsParams(mode="lockstep", lockstep_peers=("a",), lockstep_frame_steps=20,
                   raw_state_decimation=5, clock_decimation=2)


FULL14_EULER_50HZ = DynamicsParams(mode="fast", model="full14", integrator="euler",
                                   physics_rate_hz=50.0, state_rate_hz=50.0,
                                   status_rate_hz=10.0)


def test_a_step_that_would_make_the_state_non_finite_is_refused_and_the_state_kept():
    """Explicit Euler at 50 Hz cannot integrate the 14-DOF model's stiff tyres (paper 001: Euler
    "explodes on stiff springs"): the model raises instead of taking a NaN state."""
    model = make_model("full14", load_vehicle(CAR), "euler")
    model.reset(speed_mps=20.0)
    with pytest.raises(NonFiniteState, match=r"model full14: state\[\d+\] would be (nan|inf)"):
        for _ in range(200):
            before = model.state
            model.step(Controls(throttle=0.5, steer_rad=0.1), 0.02)
    assert np.isfinite(model.state).all() and np.array_equal(model.state, before)


def test_the_loop_stops_stepping_and_reports_when_the_physics_diverges():
    model = make_model("full14", load_vehicle(CAR), "euler")
    loop = SimLoop(model, FULL14_EULER_50HZ)
    loop.set_command(Controls(throttle=0.5, steer_rad=0.1))
    published, diverged = [], []

    def publish(k: int, t_ns: int) -> None:  # as the dynamics node does
        snapshot = model.snapshot()
        snapshot.require_finite()
        published.append(snapshot)

    hooks = Hooks(after_step=publish, status=lambda s: None,
                  diverged=lambda t, why: diverged.append((t, why)))
    model.reset(speed_mps=20.0)
    thread = threading.Thread(target=loop.run, args=(threading.Event(), hooks))
    thread.start()
    thread.join(timeout=30)
    assert not thread.is_alive(), "the loop must end by itself"
    assert len(diverged) == 1 and loop.diverged == diverged[0][1]
    assert re.search(r"would be (nan|inf)|is \[", loop.diverged), loop.diverged
    assert diverged[0][0] == loop.t_ns and 0 < len(published) * 20_000_000 <= loop.t_ns
    for snapshot in published:
        snapshot.require_finite()
