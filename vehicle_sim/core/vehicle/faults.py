"""Vehicle faults injected while driving: tyre blow-out, brake failure, stuck steering, engine cut.

The physics loop owns a :class:`VehicleFaults`: it hands over fault requests (from any thread, via
the loop's queue), its fault book (core.faults, the rules of every target) answers each with a
FaultChange, and every step passes the driver's (or watchdog's) controls through
:meth:`VehicleFaults.apply` before the model sees them. Durations count simulation time, so a
fault starts and ends at the same step in every run.

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

from vehicle_sim.core.faults import (
    CLEAR,
    ActiveFault,
    FaultBook,
    FaultChange,
    FaultRequest,
    Wording,
    duration_problem,
)
from vehicle_sim.core.vehicle.interface import WHEELS, Controls

KINDS = ("tyre_blowout", "brake_failure", "steering_stuck", "engine_cut")
TYRE_CHANNELS = ("fl", "fr", "rl", "rr")  # the FaultCommand.msg names, in WHEELS order
# the vehicle's messages name faults in lower case and say which tyre blew
VEHICLE_WORDING = Wording(upper_case=False, channel_names=dict(zip(TYRE_CHANNELS, WHEELS)),
                          none_active="no active vehicle fault")


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


class VehicleFaults:
    """The active faults of one vehicle model (a core FaultBook of target ``vehicle``) and what
    they do to the car. Use from the physics loop thread only."""

    def __init__(self, model):
        self.model = model
        self.book = FaultBook("vehicle", self.check, VEHICLE_WORDING)
        self._tyres = hasattr(model, "set_tyre_fault")
        self._blown: set[int] = set()  # wheels set_tyre_fault has blown

    @property
    def active(self) -> dict[int, ActiveFault]:
        return self.book.active

    def check(self, req: FaultRequest, others: list[ActiveFault] = ()) -> str | None:
        """Why ``req`` cannot be applied to this model, or None."""
        if req.kind == CLEAR:
            return None
        if req.kind not in KINDS:
            return f"unknown vehicle fault {req.kind!r} (known: {', '.join(KINDS)})"
        problem = duration_problem(req.duration_s)
        if problem is not None:
            return problem
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
        """Apply ``req`` at sim time ``t_ns``; ``steer_rad`` is the road-wheel angle now (the
        angle a ``steering_stuck`` holds)."""
        if req.kind == "steering_stuck":
            req = replace(req, value=steer_rad)
        return self._tyres_follow(self.book.command(req, t_ns))

    def expire(self, t_ns: int) -> list[FaultChange]:
        """Clear the faults whose duration has elapsed at ``t_ns``."""
        return self._tyres_follow(self.book.expire(t_ns))

    def clear_all(self, why: str) -> list[FaultChange]:
        return self._tyres_follow(self.book.clear_all(why))

    def apply(self, controls: Controls) -> Controls:
        """The controls the broken car actually receives."""
        if not self.active:
            return controls
        brake, steer, throttle = controls.brake, controls.steer_rad, controls.throttle
        for f in self.active.values():
            if f.kind == "brake_failure":
                brake *= f.request.value
            elif f.kind == "steering_stuck":
                steer = f.request.value
            elif f.kind == "engine_cut":
                throttle = 0.0
        return replace(controls, brake=brake, steer_rad=steer, throttle=throttle)

    def _tyres_follow(self, changes: list[FaultChange]) -> list[FaultChange]:
        """Blow the tyres of the active blow-outs, make the others healthy again."""
        blown = {TYRE_CHANNELS.index(f.request.channel) for f in self.active.values()
                 if f.kind == "tyre_blowout"}
        for wheel in sorted(self._blown - blown):
            self.model.set_tyre_fault(wheel)  # healthy again
        for wheel in sorted(blown - self._blown):
            self.model.set_tyre_fault(wheel, BLOWOUT.grip_scale, BLOWOUT.radius_scale,
                                      BLOWOUT.rolling_resistance_scale)
        self._blown = blown
        return changes
