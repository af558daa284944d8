"""Vehicle faults injected while driving: tyre blow-out, brake failure, stuck steering, engine cut.

The physics loop owns a :class:`VehicleFaults`: it hands over fault requests (from any thread, via
the loop's queue), the book answers each with a :class:`FaultChange`, and every step passes the
driver's (or watchdog's) controls through :meth:`VehicleFaults.apply` before the model sees them.
Durations count simulation time, so a fault starts and ends at the same step in every run.

What each fault does (the car, not the command, is broken: the watchdog's braking is affected
too):
- ``tyre_blowout`` (channel fl / fr / rl / rr): the tyre loses grip and radius and its rolling
  resistance rises (:data:`BLOWOUT`); needs a model with per-wheel tyres (``full14``).
- ``brake_failure``: brake effectiveness x ``value`` in [0, 1] (0 = no brakes at all); several
  active brake faults multiply. The handbrake is a separate circuit and keeps working.
- ``steering_stuck``: the road-wheel angle stays where it was when the fault began.
- ``engine_cut``: throttle forced to 0 (no drive torque; an engine model still drags).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

from vehicle_sim.core.vehicle.interface import WHEELS, Controls

KINDS = ("tyre_blowout", "brake_failure", "steering_stuck", "engine_cut")
TYRE_CHANNELS = ("fl", "fr", "rl", "rr")  # the FaultCommand.msg names, in WHEELS order


@dataclass(frozen=True)
class TyreDamage:
    """Scales applied to one tyre by ``set_tyre_fault`` of the 14-DOF model."""

    grip_scale: float
    radius_scale: float
    rolling_resistance_scale: float


# A tyre after a blow-out. Robinette, Deering & Fay, "Drag and steering effects of under
# inflated and deflated tires", SAE 970954 (1997), measured on cars and light trucks that a
# deflated tyre adds forward drag and a lateral pull; no published Magic Formula parameter set
# for a deflated tyre was found, so the three numbers are DESIGN VALUES giving that behaviour:
# the rim drops by about half the sidewall (radius x 0.85), the collapsed carcass carries about
# a third of the force (grip x 0.3), the drag is ~20 x a healthy tyre's rolling resistance.
# test_vehicle_full_dynamics checks the pull to the blown side.
BLOWOUT = TyreDamage(grip_scale=0.3, radius_scale=0.85, rolling_resistance_scale=20.0)


@dataclass(frozen=True)
class FaultRequest:
    """Inject (kind in KINDS) or clear (kind 'clear', id 0 = all) a fault."""

    id: int
    kind: str
    channel: str = ""
    value: float = 0.0
    duration_s: float = 0.0  # of simulation time; 0 = until cleared


@dataclass(frozen=True)
class FaultChange:
    """What happened to a fault: state 'active', 'cleared' or 'rejected', and why."""

    id: int
    kind: str
    state: str
    message: str


@dataclass(frozen=True)
class _Active:
    kind: str
    wheel: int  # tyre_blowout only, else -1
    value: float  # brake_failure: effectiveness; steering_stuck: the held angle [rad]
    until_ns: int | None


class VehicleFaults:
    """The active faults of one vehicle model. Use from the physics loop thread only."""

    def __init__(self, model):
        self.model = model
        self.active: dict[int, _Active] = {}
        self._tyres = hasattr(model, "set_tyre_fault")

    def check(self, req: FaultRequest) -> str | None:
        """Why ``req`` cannot be applied to this model, or None."""
        if req.kind == "clear":
            return None
        if req.kind not in KINDS:
            return f"unknown vehicle fault {req.kind!r} (known: {', '.join(KINDS)})"
        if not (math.isfinite(req.duration_s) and req.duration_s >= 0.0):
            return f"duration must be finite and >= 0 s, got {req.duration_s}"
        if req.kind == "tyre_blowout":
            if req.channel not in TYRE_CHANNELS:
                return f"channel must name a tyre ({', '.join(TYRE_CHANNELS)}), got {req.channel!r}"
            if not self._tyres:
                return "needs model full14 (the planar models have no per-wheel tyres)"
        elif req.channel:
            return f"takes no channel, got {req.channel!r}"
        if req.kind == "brake_failure" and not (math.isfinite(req.value)
                                                and 0.0 <= req.value <= 1.0):
            return f"value is the remaining brake effectiveness in [0, 1], got {req.value}"
        return None

    def command(self, req: FaultRequest, t_ns: int, steer_rad: float) -> list[FaultChange]:
        """Apply ``req`` at sim time ``t_ns``; ``steer_rad`` is the road-wheel angle now."""
        problem = self.check(req)
        if problem is not None:
            return [FaultChange(req.id, req.kind, "rejected", f"{req.kind}: {problem}")]
        if req.kind == "clear":
            return self._clear(req.id)
        if req.id in self.active:  # a command reusing an active id replaces that fault
            self._drop(req.id)
        wheel = TYRE_CHANNELS.index(req.channel) if req.kind == "tyre_blowout" else -1
        value = steer_rad if req.kind == "steering_stuck" else req.value
        until = t_ns + round(req.duration_s * 1e9) if req.duration_s > 0.0 else None
        self.active[req.id] = _Active(req.kind, wheel, value, until)
        if wheel >= 0:
            self.model.set_tyre_fault(wheel, BLOWOUT.grip_scale, BLOWOUT.radius_scale,
                                      BLOWOUT.rolling_resistance_scale)
        what = f" {WHEELS[wheel]}" if wheel >= 0 else ""
        left = "until cleared" if until is None else f"until t={until * 1e-9:.3f} s"
        return [FaultChange(req.id, req.kind, "active", f"{req.kind}{what} active {left}")]

    def expire(self, t_ns: int) -> list[FaultChange]:
        """Clear the faults whose duration has elapsed at ``t_ns``."""
        done = [i for i, f in self.active.items() if f.until_ns is not None and t_ns >= f.until_ns]
        return [self._drop(i, "duration elapsed") for i in done]

    def clear_all(self, why: str) -> list[FaultChange]:
        return [self._drop(i, why) for i in list(self.active)]

    def apply(self, controls: Controls) -> Controls:
        """The controls the broken car actually receives."""
        if not self.active:
            return controls
        brake, steer, throttle = controls.brake, controls.steer_rad, controls.throttle
        for f in self.active.values():
            if f.kind == "brake_failure":
                brake *= f.value
            elif f.kind == "steering_stuck":
                steer = f.value
            elif f.kind == "engine_cut":
                throttle = 0.0
        return replace(controls, brake=brake, steer_rad=steer, throttle=throttle)

    def _clear(self, fault_id: int) -> list[FaultChange]:
        if fault_id == 0:
            gone = self.clear_all("cleared")
            return gone or [FaultChange(0, "clear", "cleared", "no active vehicle fault")]
        if fault_id not in self.active:
            return [FaultChange(fault_id, "clear", "rejected",
                                f"clear: no active vehicle fault with id {fault_id}")]
        return [self._drop(fault_id, "cleared")]

    def _drop(self, fault_id: int, why: str = "replaced") -> FaultChange:
        f = self.active.pop(fault_id)
        if f.wheel >= 0 and not any(g.wheel == f.wheel for g in self.active.values()):
            self.model.set_tyre_fault(f.wheel)  # healthy again
        return FaultChange(fault_id, f.kind, "cleared", why)
