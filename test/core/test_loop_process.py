"""The real-time physics loop in a process of its own (core.loop_process): the node's requests
reach the loop, its events come back in order through the same hooks as SimLoop's, and the
process ends with its loop, with its parent, or reports why it did."""
from __future__ import annotations

import dataclasses
import os
import queue
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

import vehicle_sim
from vehicle_sim.core.accident.ego_contacts import EgoBody
from vehicle_sim.core.accident.ego_crash import EgoCrashSetup
from vehicle_sim.core.config import load
from vehicle_sim.core.dynamics_params import DynamicsParams
from vehicle_sim.core.faults import FaultRequest
from vehicle_sim.core.loop_process import (
    LoopProcess, LoopProcessFailed, LoopSetup, LoopSetupRefused)
from vehicle_sim.core.sim_loop import Hooks
from vehicle_sim.core.traffic.mapfile import load_map
from vehicle_sim.core.vehicle.interface import Controls
from vehicle_sim.core.vehicle.params import VehicleParams
from vehicle_sim.paths import config_path

VEHICLE = load(VehicleParams, config_path("vehicles/medium_car.yaml"))


def _setup(**params) -> LoopSetup:
    p = DynamicsParams(**{"model": "kinematic", "integrator": "euler", "physics_rate_hz": 500.0,
                          "clock_decimation": 5, "raw_state_decimation": 0,
                          "command_timeout_s": 100.0, "map_file": "", **params})
    return LoopSetup(p, VEHICLE)


class Recorder:
    """Hooks that keep what the loop reports, and a thread that runs the loop."""

    def __init__(self, loop: LoopProcess):
        self.loop, self.steps, self.states, self.status, self.faults = loop, [], [], [], []
        self.diverged, self.stale = [], []
        self.holds: queue.SimpleQueue[float] = queue.SimpleQueue()  # a step's hook blocks this
        # long (a node busy elsewhere)
        self.stop = threading.Event()
        self.error: Exception | None = None
        hooks = Hooks(after_step=self._step, status=self.status.append,
                      faults_changed=lambda t, ch: self.faults.extend(ch),
                      diverged=lambda t, why: self.diverged.append(why))
        self.thread = threading.Thread(target=self._run, args=(hooks,), daemon=True)
        self.thread.start()

    def _run(self, hooks: Hooks) -> None:
        try:
            self.loop.run(self.stop, hooks)
        except Exception as exc:  # noqa: BLE001 (the test looks at it)
            self.error = exc

    def _step(self, k: int, t_ns: int, snapshot=None, stale: bool = False) -> None:
        try:
            time.sleep(self.holds.get_nowait())
        except queue.Empty:
            pass
        self.steps.append((k, t_ns))
        self.stale.append(stale)
        if snapshot is not None:
            self.states.append(snapshot)

    def wait(self, condition, what: str, timeout_s: float = 20.0) -> None:
        end = time.monotonic() + timeout_s
        while not condition():
            assert self.thread.is_alive() or condition(), f"loop ended ({self.error}) before {what}"
            assert time.monotonic() < end, f"no {what} in {timeout_s} s"
            time.sleep(0.01)

    def still_for(self, quiet_s: float):
        """A condition: no new step for ``quiet_s``."""
        seen = [len(self.steps), time.monotonic()]

        def still() -> bool:
            if len(self.steps) != seen[0]:
                seen[:] = [len(self.steps), time.monotonic()]
            return time.monotonic() - seen[1] >= quiet_s
        return still

    def end(self) -> None:
        self.stop.set()
        self.thread.join(40.0)
        assert not self.thread.is_alive()
        self.loop.close(timeout_s=30.0)  # reaped (run's own close gives it 2 s)


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_a_child_held_at_the_runs_end_is_not_taken_for_a_frozen_one():
    """The run's duration: the child steps to it, sends its status there and holds, sending
    nothing more; the parent waits, past its frozen-child bound (2 s + two event periods), and
    does not kill it (it did: a run that took over 1.5 s to stop ended with exit 1)."""
    loop = LoopProcess(_setup(mode="realtime", real_time_factor=4.0, duration=0.5))
    rec = Recorder(loop)
    try:
        rec.wait(lambda: loop.k == 250, "the end step")
        rec.wait(lambda: any(s.steps == 250 for s in rec.status), "the end's status")
        time.sleep(loop._silence_bound_s() + 0.5)
        assert rec.thread.is_alive() and rec.error is None, rec.error
        assert loop.k == 250 and rec.steps[-1] == (250, 500_000_000)
    finally:
        rec.end()


def test_requests_reach_the_loop_and_its_events_come_back_in_order():
    loop = LoopProcess(_setup(real_time_factor=4.0))
    rec = Recorder(loop)
    try:
        rec.wait(lambda: len(rec.states) >= 3, "states")
        ks = [k for k, _ in rec.steps]
        assert ks == sorted(ks) and all(k % 5 == 0 for k in ks)  # clock every 5, state every 5
        assert all(t == k * 2_000_000 for k, t in rec.steps)
        assert rec.states[-1].velocity_mps[0] == 0.0  # at rest, brake of the initial command
        loop.set_command(Controls(throttle=1.0, gear=1))
        rec.wait(lambda: rec.states[-1].velocity_mps[0] > 1.0, "speed from the command")
        loop.request_fault(FaultRequest(id=7, kind="brake_failure"))
        rec.wait(lambda: rec.faults, "the fault's answer")
        assert (rec.faults[0].id, rec.faults[0].kind) == (7, "brake_failure")
        assert loop.active_fault_kinds() == ["brake_failure"]
        loop.pause(True)
        rec.wait(rec.still_for(0.3), "no step for 0.3 s")  # however long the pause takes to apply
        assert loop.paused
        loop.request_reset(50.0, 5.0, 0.0, 0.0)
        loop.request_steps(5)
        rec.wait(lambda: rec.states[-1].position_m[0] == pytest.approx(50.0, abs=0.1),
                 "the reset pose")
        rec.wait(lambda: rec.status, "a SimStatus")
        assert loop.t_ns == loop.k * 2_000_000 > 0
    finally:
        rec.end()
    assert rec.error is None and loop._proc.returncode == 0


def test_the_crash_physics_runs_in_the_process_and_reports_damage():
    spec = load_map(config_path("maps/urban_grid.yaml"))
    crash = EgoCrashSetup(tuple(spec.static_objects), EgoBody.from_vehicle(VEHICLE), 0.002)
    # at rest heading west, 6.6 m from the barrier along x = -15 m; full throttle into it
    init = dataclasses.replace(DynamicsParams().initial, x_m=-6.0, y_m=0.0, yaw_rad=3.14159)
    setup = dataclasses.replace(_setup(real_time_factor=4.0, model="single_track"),
                                crash=crash)
    setup = dataclasses.replace(setup, params=dataclasses.replace(setup.params, initial=init))
    loop = LoopProcess(setup)
    damage, contacts = [], []
    loop.on_damage = lambda t, impulse, levels: damage.append(levels)
    loop.on_contact = contacts.append
    loop.set_command(Controls(throttle=1.0, gear=1))
    rec = Recorder(loop)
    try:
        rec.wait(lambda: damage and max(damage[-1]) > 0, "damage from the barrier")
        assert contacts and contacts[0].startswith("ego crash into static/")
    finally:
        rec.end()


def test_a_process_that_dies_is_reported_and_a_stop_before_start_ends_it():
    loop = LoopProcess(_setup())
    rec = Recorder(loop)
    rec.wait(lambda: rec.steps, "steps")
    os.kill(loop.pid, 9)
    rec.thread.join(10.0)
    assert isinstance(rec.error, LoopProcessFailed)
    assert "exit code -9" in str(rec.error)

    idle = LoopProcess(_setup())
    idle.close(timeout_s=30.0)
    assert idle._proc.returncode == 0  # it ended on the stop, without a start


def test_a_model_that_cannot_be_built_fails_with_the_childs_traceback(capfd):
    bad = dataclasses.replace(_setup(), terrain=object())  # a bug: kinematic has no terrain
    with pytest.raises(LoopProcessFailed, match="physics process failed while building"):
        LoopProcess(bad)
    assert "Traceback" in capfd.readouterr().err


def test_a_setup_the_model_rejects_is_a_refusal_naming_it():
    setup = _setup()
    object.__setattr__(setup.params, "integrator", "leapfrog")  # past DynamicsParams' check
    with pytest.raises(LoopSetupRefused, match="unknown integrator 'leapfrog'"):
        LoopProcess(setup)
    assert issubclass(LoopSetupRefused, ValueError)  # the node's start refuses with exit 2


def test_a_request_the_loop_cannot_take_stops_it_and_is_reported():
    loop = LoopProcess(_setup())
    rec = Recorder(loop)
    rec.wait(lambda: rec.steps, "steps")
    loop._send(("reset", (1.0, 2.0)))  # a malformed request: three values short
    rec.thread.join(10.0)
    assert isinstance(rec.error, LoopProcessFailed) and "TypeError" in str(rec.error)
    loop.close(timeout_s=30.0)
    assert loop._proc.returncode == 1


def test_a_node_behind_gets_the_waiting_steps_marked_stale_then_catches_up():
    loop = LoopProcess(_setup(real_time_factor=2.0))
    rec = Recorder(loop)
    try:
        # a node keeping up: nothing stale (statuses in between); a busy host may leave the
        # very first steps waiting, so it is a run of five fresh ones
        rec.wait(lambda: len(rec.stale) >= 5 and not any(rec.stale[-5:]), "five fresh steps")
        before = len(rec.stale)
        rec.holds.put(0.3)  # ~120 step events queue meanwhile
        rec.wait(lambda: any(rec.stale[before:]), "a stale step")
        first = before + rec.stale[before:].index(True)
        rec.wait(lambda: not rec.stale[-1] and len(rec.stale) > first + 1, "caught up")
    finally:
        rec.end()
    ks = [k for k, _ in rec.steps]
    assert ks == sorted(ks) and len(set(ks)) == len(ks)  # every step reaches the node, in order
    assert loop.stale_steps == sum(rec.stale)


def test_the_process_is_out_of_the_nodes_group_and_ignores_sigint_and_sigterm():
    loop = LoopProcess(_setup())
    rec = Recorder(loop)
    try:
        rec.wait(lambda: rec.steps, "steps")
        assert os.getpgid(loop.pid) != os.getpgid(0)  # a group's Ctrl-C/SIGTERM: the node's
        for sig in (signal.SIGINT, signal.SIGTERM):
            os.kill(loop.pid, sig)
            n = len(rec.steps)
            rec.wait(lambda n=n: len(rec.steps) > n + 10, f"steps after {sig.name}")
    finally:
        rec.end()
        loop.close()  # a second close does nothing
    assert rec.error is None and loop._proc.returncode == 0


def test_a_child_that_stops_reading_is_a_failure_and_no_send_blocks():
    loop = LoopProcess(_setup(), take_timeout_s=1000.0)  # the full pipe, not the commands, tells
    rec = Recorder(loop)
    rec.wait(lambda: rec.steps, "steps")
    os.kill(loop.pid, signal.SIGSTOP)  # frozen: its request pipe fills
    for _ in range(20000):  # ~1 MB of requests into a 256 KiB pipe: none blocks
        loop.request_reset(1.0, 2.0, 0.0, 0.0)
    rec.thread.join(30.0)
    assert isinstance(rec.error, LoopProcessFailed) and "stopped reading" in str(rec.error)
    loop.close(timeout_s=30.0)
    assert loop._proc.returncode == -signal.SIGKILL


@pytest.mark.parametrize("paused", [False, True])
def test_a_frozen_child_that_takes_no_command_is_a_failure(paused):
    """Commands go through shared memory, not the pipe: a frozen child is found by the commands
    it leaves untaken (running, or paused), not by a pipe that fills."""
    loop = LoopProcess(_setup(), take_timeout_s=0.5)
    rec = Recorder(loop)
    rec.wait(lambda: rec.steps, "steps")
    if paused:
        loop.pause(True)
        rec.wait(rec.still_for(0.3), "no step for 0.3 s")
    os.kill(loop.pid, signal.SIGSTOP)
    loop.set_command(Controls(throttle=0.5, gear=1))  # one command, never taken
    rec.thread.join(30.0)
    assert isinstance(rec.error, LoopProcessFailed), rec.error
    assert "stopped taking commands" in str(rec.error)
    loop.close(timeout_s=30.0)
    assert loop._proc.returncode == -signal.SIGKILL


def test_a_frozen_child_is_found_without_commands():
    """No command comes (a rig that sends none yet): a running child that sends no step for
    the bound is frozen all the same, not a /clock that silently stops."""
    loop = LoopProcess(_setup(), take_timeout_s=0.5)
    rec = Recorder(loop)
    rec.wait(lambda: rec.steps, "steps")
    os.kill(loop.pid, signal.SIGSTOP)
    end = time.monotonic() + 30.0
    while rec.thread.is_alive() and time.monotonic() < end:
        loop.pause(False)  # a client repeating "not paused" is no resume: found all the same
        time.sleep(0.05)
    assert isinstance(rec.error, LoopProcessFailed), rec.error
    assert "sent no step" in str(rec.error)
    loop.close(timeout_s=30.0)
    assert loop._proc.returncode == -signal.SIGKILL


def test_a_paused_child_takes_its_commands_and_is_not_taken_for_frozen():
    loop = LoopProcess(_setup(), take_timeout_s=0.5)
    rec = Recorder(loop)
    try:
        rec.wait(lambda: rec.steps, "steps")
        loop.pause(True)
        rec.wait(rec.still_for(0.3), "no step for 0.3 s")
        end = time.monotonic() + 2.0  # several take timeouts of commands while paused
        while time.monotonic() < end:
            loop.set_command(Controls(throttle=1.0, gear=1))
            time.sleep(0.02)
        assert rec.thread.is_alive() and rec.error is None
        loop.pause(False)
        rec.wait(lambda: rec.states and rec.states[-1].velocity_mps[0] > 1.0,
                 "speed from the command sent while paused")
    finally:
        rec.end()
    assert rec.error is None and loop._proc.returncode == 0


def test_a_node_that_stalls_does_not_take_its_healthy_child_for_frozen():
    """The node busy for longer than the take timeout: its event pipe fills, the child blocks
    sending and takes no command meanwhile. It is not frozen: it runs on once the node reads."""
    # an event with a state every 1 ms step: the pipe fills within a second
    loop = LoopProcess(_setup(physics_rate_hz=1000.0, clock_decimation=1,
                              raw_state_decimation=1), take_timeout_s=0.5)
    rec = Recorder(loop)
    try:
        rec.wait(lambda: rec.steps, "steps")
        rec.holds.put(4.0)  # the next step's hook holds the node for 4 s
        time.sleep(2.0)  # the pipe (~850 step events at 1 kHz) is full: the child waits
        loop.set_command(Controls(throttle=1.0, gear=1))  # untaken until the node reads
        rec.wait(lambda: len(rec.steps) > 3000, "steps well after the stall", timeout_s=60.0)
        assert rec.error is None
    finally:
        rec.end()
    assert rec.error is None and loop._proc.returncode == 0


def test_the_physics_process_dies_with_its_parent(tmp_path):
    script = textwrap.dedent(f"""
        import os, sys
        sys.path.insert(0, {str(tmp_path)!r})
        from vehicle_sim.core.loop_process import LoopProcess, LoopSetup
        from test_helper_setup import setup
        if __name__ == "__main__":
            loop = LoopProcess(setup())
            print(loop.pid, flush=True)
            os._exit(0)  # no clean-up: only the kernel's death signal ends the child
    """)
    (tmp_path / "test_helper_setup.py").write_text(textwrap.dedent("""
        from vehicle_sim.core.config import load
        from vehicle_sim.core.dynamics_params import DynamicsParams
        from vehicle_sim.core.loop_process import LoopSetup
        from vehicle_sim.core.vehicle.params import VehicleParams
        from vehicle_sim.paths import config_path
        def setup():
            return LoopSetup(DynamicsParams(model="kinematic", map_file=""),
                             load(VehicleParams, config_path("vehicles/medium_car.yaml")))
    """))
    (tmp_path / "parent.py").write_text(script)
    env = {**os.environ, "PYTHONPATH": str(Path(vehicle_sim.__file__).parents[1])}
    out = subprocess.run([sys.executable, str(tmp_path / "parent.py")], capture_output=True,
                         text=True, timeout=120, check=True, env=env).stdout
    pid = int(out.split()[0])
    end = time.monotonic() + 10.0
    while not _gone(pid) and time.monotonic() < end:
        time.sleep(0.05)
    assert _gone(pid)
