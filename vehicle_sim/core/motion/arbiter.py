"""Which source drives the vehicle and which command the bridge publishes, decided once a cycle.

Sources: the stack inputs (``StackInput``, one per command topic of an autonomy stack; a new
kind of stack command is one more entry) and the driver at the steering rig. The takeover mux
(``mux.CommandMux``, inside ``SteeringBridge``) latches whether the stack or the driver is in
charge; the active source adds freshness and the fallback:

- mux on the driver: "driver" while the rig's input is fresh, else "none";
- mux on the stack: the first stack input (table order) whose newest command is at most its
  ``timeout_s`` old; else "driver" if ``driver_fallback`` and the rig's input is fresh; else
  "none".

Publication: the active source's command at once when the source changes, then every
``publish_every`` cycles; nothing for "none", but once the safe command (full brake, no
throttle, steering held) when a driving source goes stale, so the last command does not drive
on until the dynamics node's own watchdog (a stack forwarded on receipt excepted: there the
watchdog's sim time decides, as a run must repeat). With ``forward_on_receipt`` (fast and lockstep
runs, where sim time outruns the wall-clock loop) a stack command is forwarded as it arrives
(``offer``) unless the mux is on the driver (a takeover holds while the rig is silent), and
the loop does not repeat it, so the dynamics node gets each one in its frame.

Brake to engage: the driver's command goes out as the rig gives it only once the driver has
engaged since the rig became the source: by the takeover that made it the source (button or
steering torque: a deliberate act, with the pedals as they are), or later by the brake (at
least ``ENGAGE_BRAKE``) or the takeover button, with the throttle released (at most
``RELEASED_THROTTLE``). Until then, after a fallback, after the rig's input came back, or
after an e-stop was cleared, it is held at full brake with no throttle (the driver steers): a
rig at rest does not let the car coast, a floored pedal does not launch it, not even after a
tap on the brake. The driver's command: road-wheel angle = handwheel angle / steering
ratio, gear from the paddles' rising edges (starts in 1, -1..max_gear), stamped with the newest
vehicle state.

E-stop (``estopped``, set by the bridge's e-stop service): the source is "estop" whatever the
mux and the inputs say; the command is full brake, no throttle, the steering held where it was,
published every ``publish_every`` cycles, and stack commands are not forwarded, until cleared
(``clear_estop``): then only stack commands that come after the clear count.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from vehicle_sim.core.controls import DriveCommand
from vehicle_sim.core.motion.input_map import DriverInput
from vehicle_sim.core.motion.mux import Source
from vehicle_sim.core.motion.steering import SteeringBridge, SteeringFrame
from vehicle_sim.core.vehicle.interface import Controls

NONE = "none"  # no fresh command: nothing is published (the dynamics node's watchdog brakes)
DRIVER = Source.DRIVER.value
ESTOP = "estop"  # the e-stop is latched: full brake whatever the sources send
ENGAGE_BRAKE = 0.1  # a choice: a tenth of the pedal, past a resting pedal's noise and dead zone
RELEASED_THROTTLE = 0.05  # a choice: a throttle this low is released (engaging needs it)
HELD = ("held at full brake until the brake pedal or the takeover button is pressed, the "
        "throttle released")


@dataclass(frozen=True)
class StackInput:
    """One command source of an autonomy stack."""

    name: str  # as published on bridge/active_source
    timeout_s: float  # [s] wall clock (sim time in lockstep): an older command is not fresh


@dataclass(frozen=True)
class ArbiterParams:
    stack_inputs: tuple[StackInput, ...]  # in priority order
    driver_fallback: bool  # the rig drives while no stack input is fresh, even before a takeover
    forward_on_receipt: bool  # fast / lockstep runs: stack commands are forwarded as they arrive
    publish_every: int  # cycles between two publications of an unchanged source
    steering_ratio: float  # [-] handwheel angle / road-wheel angle
    max_gear: int  # highest forward gear the paddles select

    def __post_init__(self) -> None:
        names = [s.name for s in self.stack_inputs]
        if len(set(names)) != len(names) or {DRIVER, NONE, ESTOP, ""} & set(names):
            raise ValueError(f"stack input names must be unique, non-empty and not "
                             f"{DRIVER!r}, {NONE!r} or {ESTOP!r}: {names}")


@dataclass(frozen=True)
class Decision:
    """One cycle's outcome: the active source and what to publish now."""

    source: str  # "none", "driver", "estop" or a stack input's name
    changed: bool  # differs from the previous cycle's source
    reason: str  # why the mux switched this cycle ('' if it did not)
    command: DriveCommand | None  # publish this now; None: nothing this cycle


class CommandArbiter:
    """Holds the newest command of each stack input, the driver's gear and the active source.

    ``offer`` runs on the thread receiving stack commands, ``cycle`` on the control loop.
    """

    def __init__(self, params: ArbiterParams, steering: SteeringBridge):
        self.params, self.steering = params, steering
        self.source = ""  # none decided yet: the first cycle reports a change
        self.gear = 1
        self.driver_command = DriveCommand(Controls())  # the rig's, built every cycle
        self._latest: dict[str, tuple[DriveCommand, float]] = {}
        self._cycles = 0
        self._last_steer_rad = 0.0  # of the last command decided, held by the e-stop
        self._last_gear = 1  # likewise
        self._mux_on_driver = False  # the takeover latch after the last cycle
        self._engaged = False  # the driver engaged since the rig became the source (docstring)
        self.estopped = False

    def estop(self) -> None:
        self.estopped = True

    def clear_estop(self) -> None:
        """The e-stop is cleared: stack commands from before it are dropped, and the driver
        engages again (module docstring)."""
        self.estopped, self._engaged = False, False
        self._latest.clear()

    def offer(self, name: str, command: DriveCommand, now_s: float) -> bool:
        """Store stack input ``name``'s newest command; True: forward it now (module doc)."""
        self._latest[name] = (command, now_s)
        # (a driver by fallback gives way to the stack: forwarded too)
        forward = (self.params.forward_on_receipt and not self.estopped
                   and not self._mux_on_driver and self._fresh_stack(now_s)[0] == name)
        if forward:
            self._remember(command)
        return forward

    def restamp_stack(self, now_s: float) -> None:
        """Every stored stack command as if it had come at ``now_s``: the stack's clock jumped
        (lockstep: a respawned bridge's first frame, core.motion.stack_sync.StackSync)."""
        self._latest = {name: (command, now_s) for name, (command, _) in self._latest.items()}

    def cycle(self, now_s: float, aligning_moment_nm: float, stamp_ns: int,
              stack_now_s: float | None = None) -> tuple[SteeringFrame, Decision]:
        """Run the steering rig's cycle and decide the source; stamp_ns: newest vehicle state;
        ``stack_now_s``: the clock of the stack commands' freshness when it is not ``now_s``
        (lockstep with the stack: sim time, as ``offer`` was given, core.motion.stack_sync)."""
        name, stack_cmd = self._fresh_stack(now_s if stack_now_s is None else stack_now_s)
        frame = self.steering.cycle(now_s, aligning_moment_nm)
        self._driver(frame.driver, stamp_ns)
        self._mux_on_driver = frame.source is Source.DRIVER
        if self.estopped:
            source = ESTOP
        elif frame.source is Source.DRIVER:
            source = DRIVER if frame.input_fresh else NONE
        elif name:
            source = name
        else:
            source = DRIVER if self.params.driver_fallback and frame.input_fresh else NONE
        if source != DRIVER:
            self._engaged = False
        elif not self._engaged:  # (module docstring)
            d = frame.driver
            self._engaged = (bool(frame.switched_because) and self._mux_on_driver
                             or d.throttle <= RELEASED_THROTTLE
                             and (d.brake >= ENGAGE_BRAKE or d.takeover))
        # (forwarded on receipt, a stack's staleness is the dynamics node's watchdog's, in sim
        # time: a brake from this wall-clock loop would land in a frame no run repeats)
        stack_before = self.source not in ("", NONE, ESTOP, DRIVER)
        went_stale = source == NONE and (self.source == DRIVER or (
            stack_before and not self.params.forward_on_receipt))
        changed, self.source = source != self.source, source
        held = changed and source == DRIVER and not self._engaged
        reason = frame.switched_because or (HELD if held else "")
        due = changed or self._cycles % self.params.publish_every == 0
        self._cycles += 1
        driver = self.driver_command if self._engaged else self._held(self.driver_command)
        command = {DRIVER: driver, ESTOP: self._estop_command(stamp_ns)}.get(source, stack_cmd)
        if source == NONE or not due or (name == source and self.params.forward_on_receipt):
            command = self._estop_command(stamp_ns) if went_stale else None
        if command is not None:
            self._remember(command)
        return frame, Decision(source, changed, reason, command)

    def _remember(self, command: DriveCommand) -> None:
        """Remember the steering and gear of a command going out (not validated yet: finite
        only): the safe command holds them (no shift into forward while reversing)."""
        if math.isfinite(command.values.steer_rad):
            self._last_steer_rad = command.values.steer_rad
        self._last_gear = command.values.gear

    @staticmethod
    def _held(command: DriveCommand) -> DriveCommand:
        """The driver's command at full brake, no throttle (not engaged yet)."""
        v = command.values
        return DriveCommand(Controls(steer_rad=v.steer_rad, brake=1.0, clutch=v.clutch,
                                     gear=v.gear, handbrake=v.handbrake), command.stamp_ns)

    def _estop_command(self, stamp_ns: int) -> DriveCommand:
        held = Controls(steer_rad=self._last_steer_rad, brake=1.0, gear=self._last_gear)
        return DriveCommand(held, stamp_ns)

    def _fresh_stack(self, now_s: float) -> tuple[str, DriveCommand | None]:
        """The first stack input with a fresh command, ('', None) if none."""
        for s in self.params.stack_inputs:
            latest = self._latest.get(s.name)
            if latest is not None and now_s - latest[1] <= s.timeout_s:
                return s.name, latest[0]
        return "", None

    def _driver(self, d: DriverInput, stamp_ns: int) -> None:
        """Build the rig's command of this cycle (once per cycle, whatever the source)."""
        if d.gear_up:
            self.gear = min(self.gear + 1, self.params.max_gear)
        if d.gear_down:
            self.gear = max(self.gear - 1, -1)
        self.driver_command = DriveCommand(Controls(
            steer_rad=d.handwheel_angle_rad / self.params.steering_ratio, throttle=d.throttle,
            brake=d.brake, clutch=d.clutch, gear=self.gear, handbrake=d.handbrake), stamp_ns)
