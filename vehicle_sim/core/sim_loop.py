"""The fixed-step simulation loop of the dynamics node, free of ROS.

The loop runs in its own thread and alone touches the model. Other threads (the ROS executor)
only hand over commands, pause/step/reset requests and lockstep acknowledgements. Simulation
time is an integer count of nanoseconds, k * dt_ns, so a run with the same inputs is
reproducible bit for bit.
"""
from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from vehicle_sim.core.controls import CommandWatchdog
from vehicle_sim.core.dynamics_params import DynamicsParams
from vehicle_sim.core.fault_schedule import PendingFaults
from vehicle_sim.core.faults import REJECTED, FaultChange, FaultRequest
from vehicle_sim.core.realtime import (
    LatenessWindow,
    LockstepBarrier,
    Pacer,
    set_realtime_priority,
    tighten_timer_slack,
)
from vehicle_sim.core.vehicle.faults import VehicleFaults
from vehicle_sim.core.vehicle.interface import Controls, NonFiniteState, VehicleModel

# the newest command if one came since the last call, else None (core.command_slot.CommandSlot)
CommandSource = Callable[[], Controls | None]


@dataclass(frozen=True)
class LoopStatus:
    sim_time_s: float
    steps: int
    overruns: int
    paused: bool
    real_time_factor: float  # achieved since the previous status
    lateness_s: tuple[float, float, float]  # p50, p99, max
    compute_p99_s: float
    command_timeout: bool


@dataclass
class Hooks:
    """Callbacks of the node, called from the loop thread."""

    # (step k, t_ns); core.loop_process adds (snapshot, stale): the state sent by the physics
    # process, and whether newer steps already wait
    after_step: Callable[..., None]
    status: Callable[[LoopStatus], None]
    frame_stalled: Callable[[int, list[str]], None] = lambda t_ns, peers: None
    faults_changed: Callable[[int, list[FaultChange]], None] = lambda t_ns, changes: None
    # the physics diverged (t_ns, why): the loop has stopped stepping for good
    diverged: Callable[[int, str], None] = lambda t_ns, why: None
    # before each physics step (k, t_ns), inside the step's compute time: e.g. the crash wrench
    # of the ego (set_external_wrench), held over the step
    before_step: Callable[[int, int], None] = lambda k, t_ns: None
    # after a reset was applied (t_ns): e.g. crash contacts and damage cleared
    reset_done: Callable[[int], None] = lambda t_ns: None


def step_outputs(params: DynamicsParams, k: int) -> tuple[bool, bool, bool]:
    """What the node publishes after step k: (/clock, vehicle/state_raw, vehicle/state + odom)."""
    raw = params.raw_state_decimation > 0 and k % params.raw_state_decimation == 0
    return (k % params.clock_decimation == 0, raw,
            k % params.every(params.state_rate_hz) == 0)


class SimLoop:
    """``commands``: where the loop thread takes the newest command itself, just before each
    step (and, paused, at each wake-up), besides set_command (core.loop_process)."""

    def __init__(self, model: VehicleModel, params: DynamicsParams,
                 clock: Callable[[], float] = time.monotonic,
                 commands: CommandSource | None = None):
        self.model, self.params = model, params
        self._commands = commands
        self._clock = clock
        self.dt_ns = params.dt_ns
        self._dt_s = self.dt_ns * 1e-9  # the model's step [s]
        self.k = 0
        self._end_k = params.end_step  # 0: no end
        self._command = Controls(brake=params.watchdog_brake)
        self._watchdog = CommandWatchdog(params.command_timeout_s, params.watchdog_brake)
        self.barrier = (LockstepBarrier(params.lockstep_peers, lambda: self.t_ns)
                        if params.mode == "lockstep" else None)
        self._pacer = Pacer(self.dt_ns * 1e-9, params.real_time_factor, clock=clock)
        self._paused = threading.Event()
        self._wake = threading.Event()
        self._pending_steps = 0
        self._pending_reset: tuple[float, float, float, float] | None = None
        self.faults = VehicleFaults(model)
        # (request, at_ns) appended by other threads; held here until their step
        self._fault_requests: deque[tuple[FaultRequest, int]] = deque()
        self._held_faults = PendingFaults()
        self._applied = self._command  # the controls of the last step, after the faults
        self._lock = threading.Lock()
        self.lateness = LatenessWindow()
        self.compute = LatenessWindow()
        self.command_timeout = True
        self.priority_problem = ""  # why a requested real-time priority was refused
        self.diverged = ""  # why the loop stopped stepping (a non-finite state), '' if not
        self._status_mark = (clock(), 0)
        model.reset(params.initial.x_m, params.initial.y_m, params.initial.yaw_rad,
                    params.initial.speed_mps)

    # ---- called from other threads -------------------------------------------------------
    @property
    def at_end(self) -> bool:
        """The run's duration (DynamicsParams.duration) is reached: no more steps."""
        return 0 < self._end_k <= self.k

    @property
    def t_ns(self) -> int:
        return self.k * self.dt_ns

    def set_command(self, controls: Controls) -> None:
        self._command = controls
        self._watchdog.feed(self.t_ns)

    def pause(self, paused: bool) -> None:
        if paused:
            self._paused.set()
        else:
            self._paused.clear()
            self._pacer.reanchor()
        self._wake.set()

    @property
    def paused(self) -> bool:
        return self._paused.is_set()

    def request_steps(self, n: int) -> None:
        """While paused, advance exactly n steps."""
        with self._lock:
            self._pending_steps += n
        self._wake.set()

    def request_reset(self, x_m: float, y_m: float, yaw_rad: float, speed_mps: float) -> None:
        with self._lock:
            self._pending_reset = (x_m, y_m, yaw_rad, speed_mps)
        self._wake.set()

    def request_fault(self, req: FaultRequest, at_ns: int = 0) -> None:
        """Inject or clear a vehicle fault at the first step with t >= at_ns (the next one for
        a time already past); answered by Hooks.faults_changed."""
        self._fault_requests.append((req, at_ns))
        self._wake.set()

    def set_real_time_factor(self, rtf: float) -> None:
        self._pacer.set_real_time_factor(rtf)

    def active_fault_kinds(self) -> list[str]:
        """Kinds of the vehicle faults in force (the node's diagnostics)."""
        return [f.kind for f in self.faults.active.values()]

    # ---- the loop thread -----------------------------------------------------------------
    def run(self, stop: threading.Event, hooks: Hooks) -> None:
        tighten_timer_slack()
        if self.params.mode == "realtime":
            self.priority_problem = set_realtime_priority(self.params.realtime_priority)
        status_every_s = 1.0 / self.params.status_rate_hz
        next_status = self._clock() + status_every_s
        hooks.status(self.status())  # one at start: late joiners and short runs see the mode
        steps_per_s = max(1, round(1e9 / self.dt_ns))
        while not stop.is_set():
            self._apply_reset(hooks)
            self._apply_faults(hooks)
            if not self._may_step(stop):
                self._take_command()  # paused: the node still sees its commands taken
                continue
            if self.params.mode == "realtime" and not self.paused:
                self.lateness.add(self._pacer.wait())
            self._take_command()
            try:  # a non-finite state, or (after_step, publishing) a non-finite output
                self.step(hooks)
                hooks.after_step(self.k, self.t_ns)
            except NonFiniteState as exc:  # publish nothing absurd: stop and say why
                self.diverged = str(exc)
                hooks.status(self.status())
                hooks.diverged(self.t_ns, self.diverged)
                break
            if self.barrier is not None and self.k % self.params.lockstep_frame_steps == 0:
                self._wait_frame(stop, hooks)
            # every status period of wall time, in fast/lockstep modes also every simulated
            # second (a fast run may end before one wall period), and at the run's end (its
            # summary ends on it: nodes.monitor_node)
            sim_second = self.params.mode != "realtime" and self.k % steps_per_s == 0
            if sim_second or self.at_end or self._clock() >= next_status:
                next_status = self._clock() + status_every_s
                hooks.status(self.status())
        if self.barrier is not None:
            self.barrier.release()

    def step(self, hooks: Hooks | None = None) -> None:
        """One physics step with the current (or watchdog) command (hooks: its before_step)."""
        t_ns = self.k * self.dt_ns
        self.command_timeout = self._watchdog.expired(t_ns)
        controls = self._watchdog.safe(self._command) if self.command_timeout else self._command
        controls = self._applied = self.faults.apply(controls)
        start = time.perf_counter()
        if hooks is not None:
            hooks.before_step(self.k, t_ns)
        self.model.step(controls, self._dt_s)
        self.compute.add(time.perf_counter() - start)
        self.k += 1

    def status(self) -> LoopStatus:
        now = self._clock()
        wall0, k0 = self._status_mark
        self._status_mark = (now, self.k)
        rtf = (self.k - k0) * self.dt_ns * 1e-9 / (now - wall0) if now > wall0 else 0.0
        out = LoopStatus(sim_time_s=self.t_ns * 1e-9, steps=self.k,
                         overruns=self._pacer.overruns, paused=self.paused,
                         real_time_factor=rtf, lateness_s=self.lateness.percentiles(),
                         compute_p99_s=self.compute.percentiles()[1],
                         command_timeout=self.command_timeout)
        self.lateness.clear()
        self.compute.clear()
        return out

    def _take_command(self) -> None:
        if self._commands is not None:
            controls = self._commands()
            if controls is not None:
                self.set_command(controls)

    def _may_step(self, stop: threading.Event) -> bool:
        if not self.at_end:  # at the run's duration: hold, taking commands, resets and faults
            if not self.paused:
                return True
            with self._lock:
                if self._pending_steps > 0:
                    self._pending_steps -= 1
                    return True
        self._wake.wait(0.05)
        self._wake.clear()
        return False

    def _apply_reset(self, hooks: Hooks) -> None:
        with self._lock:
            pose, self._pending_reset = self._pending_reset, None
        if pose is not None:
            changes = self.faults.clear_all("vehicle reset")  # a reset car is a healthy car
            self.model.reset(*pose)
            self._pacer.reanchor()
            hooks.reset_done(self.t_ns)
            if changes:
                hooks.faults_changed(self.t_ns, changes)

    def _apply_faults(self, hooks: Hooks) -> None:
        changes = []
        while self._fault_requests:
            req, at_ns = self._fault_requests.popleft()
            problem = self._held_faults.hold(req, at_ns)
            if problem is not None:
                changes.append(FaultChange(req.id, req.kind, REJECTED, problem))
        for req in self._held_faults.due(self.t_ns) if len(self._held_faults) else ():
            changes += self.faults.command(req, self.t_ns, self._applied.steer_rad)
        changes += self.faults.expire(self.t_ns)
        if changes:
            hooks.faults_changed(self.t_ns, changes)

    def _wait_frame(self, stop: threading.Event, hooks: Hooks) -> None:
        while not stop.is_set() and not self.barrier.wait_for(self.t_ns, timeout_s=1.0):
            hooks.frame_stalled(self.t_ns, self.barrier.stalled(self.t_ns))
        self._pacer.reanchor()
