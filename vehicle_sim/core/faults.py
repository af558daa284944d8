"""The fault book: active injected faults of one target, on integer nanoseconds of sim time.

Every fault target (the vehicle, the imu and gps sensors, the bridge's platform and wheel links)
keeps its injected faults in one :class:`FaultBook`; only the target's ``check`` (which faults,
channels and values it takes) differs. The rules, the same for every target:
- a request carries an ``id`` chosen by the sender; a request reusing an active id replaces that
  fault (no separate status for the replaced one);
- ``duration_s`` counts simulation time, 0 = until cleared; the fault ends at the first
  ``expire(t_ns)`` with ``t_ns >= start + duration`` (exact integer nanoseconds, so at the same
  step in every run);
- kind ``clear`` with id 0 clears every fault of the target, else the fault with that id;
- a request the target cannot take is rejected with the reason and changes nothing.
Each call answers with the :class:`FaultChange` list the owner reports (ACTIVE / CLEARED /
REJECTED and a human-readable message).
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

CLEAR = "clear"
ACTIVE, CLEARED, REJECTED = "active", "cleared", "rejected"


@dataclass(frozen=True)
class FaultRequest:
    """Inject (``kind`` a fault the target takes) or clear (kind ``clear``, id 0 = all)."""

    id: int
    kind: str
    channel: str = ""
    value: float = 0.0
    duration_s: float = 0.0  # of simulation time; 0 = until cleared
    vector: tuple[float, float, float] = (0.0, 0.0, 0.0)


@dataclass(frozen=True)
class FaultChange:
    """What happened to a fault: state ``active``, ``cleared`` or ``rejected``, and why."""

    id: int
    kind: str
    state: str
    message: str


@dataclass(frozen=True)
class ActiveFault:
    request: FaultRequest
    until_ns: int | None  # sim time it ends [ns]; None = until cleared

    @property
    def kind(self) -> str:
        return self.request.kind


# why ``request`` cannot apply to the target given its other active faults, or None
Check = Callable[[FaultRequest, list[ActiveFault]], "str | None"]


@dataclass(frozen=True)
class Wording:
    """How a target names its faults in messages (kept as each target has always said it)."""

    upper_case: bool = True  # BIAS_STEP (the FaultCommand constant) or bias_step
    # name the channel in the ACTIVE message by this map ("tyre_blowout front_left active ...");
    # None = the channel is not named
    channel_names: Mapping[str, str] | None = None
    none_active: str = "no active fault"  # answer to CLEAR 0 with nothing active

    def name(self, kind: str) -> str:
        """A kind in messages; an unknown one ("fault 42", not an identifier) as it is."""
        return kind.upper() if self.upper_case and kind.isidentifier() else kind


# the longest fault duration [s] (~11.6 days of simulation time; 0 = until cleared): an
# integer count of nanoseconds then stays far inside 64 bits
MAX_DURATION_S = 1.0e6


# the longest channel (a channel, tyre, agent selector or topic name) and kind a request may
# carry: rmw's RMW_TOPIC_MAX_NAME_LENGTH (255, the DDS prefix included) bounds the longest
# topic; longer text is refused by its length, never echoed into the answer and the log
MAX_TEXT_CHARS = 255


def text_problem(req: FaultRequest) -> str | None:
    """Why a request's text is too long to be read (MAX_TEXT_CHARS), else None."""
    for what, text in (("kind", req.kind), ("channel", req.channel)):
        if len(text) > MAX_TEXT_CHARS:
            return f"{what} of {len(text)} characters (at most {MAX_TEXT_CHARS})"
    return None


def duration_problem(duration_s: float) -> str | None:
    if math.isfinite(duration_s) and 0.0 <= duration_s <= MAX_DURATION_S:
        return None
    return (f"duration must be finite, >= 0 and <= {MAX_DURATION_S:g} s (0 = until cleared), "
            f"got {duration_s}")


def not_applicable(target: str, accepted: tuple[str, ...]) -> str:
    names = ", ".join(k.upper() for k in (*accepted, CLEAR))
    return f"not applicable to {target} (accepted: {names})"


class FaultBook:
    """Active faults of one target. Not thread-safe: one thread (the owner's) calls it."""

    def __init__(self, target: str, check: Check, wording: Wording = Wording()):
        self.target, self._check, self.wording = target, check, wording
        self.active: dict[int, ActiveFault] = {}

    def command(self, req: FaultRequest, t_ns: int) -> list[FaultChange]:
        """Apply ``req`` at sim time ``t_ns``."""
        too_long = text_problem(req)
        if too_long is not None:
            return [FaultChange(req.id, req.kind[:MAX_TEXT_CHARS], REJECTED, too_long)]
        name = self.wording.name(req.kind)
        if req.kind == CLEAR:
            return self._clear(req.id)
        if req.id == 0:  # 0 names no fault (TrafficAgent.fault_id, AccidentEvent) but CLEAR's all
            return [FaultChange(0, req.kind, REJECTED,
                                f"{name}: id 0 is only for CLEAR (every fault of the target)")]
        others = [f for i, f in self.active.items() if i != req.id]
        problem = self._check(req, others) or duration_problem(req.duration_s)
        if problem is not None:
            return [FaultChange(req.id, req.kind, REJECTED, f"{name}: {problem}")]
        until = t_ns + round(req.duration_s * 1e9) if req.duration_s > 0.0 else None
        self.active.pop(req.id, None)  # a reused id replaces that fault
        self.active[req.id] = ActiveFault(req, until)
        names = self.wording.channel_names
        what = f" {names.get(req.channel, req.channel)}" if names and req.channel else ""
        left = "until cleared" if until is None else f"until t={until * 1e-9:.3f} s"
        return [FaultChange(req.id, req.kind, ACTIVE, f"{name}{what} active {left}")]

    def expire(self, t_ns: int) -> list[FaultChange]:
        """End the faults whose duration has elapsed at ``t_ns``."""
        done = [i for i, f in self.active.items() if f.until_ns is not None and t_ns >= f.until_ns]
        return [self._drop(i, "duration elapsed") for i in done]

    def clear_all(self, why: str) -> list[FaultChange]:
        return [self._drop(i, why) for i in list(self.active)]

    def _clear(self, fault_id: int) -> list[FaultChange]:
        if fault_id == 0:
            return (self.clear_all("cleared")
                    or [FaultChange(0, CLEAR, CLEARED, self.wording.none_active)])
        if fault_id not in self.active:
            return [FaultChange(fault_id, CLEAR, REJECTED, f"{self.wording.name(CLEAR)}: no active "
                                f"{self.target} fault with id {fault_id}")]
        return [self._drop(fault_id, "cleared")]

    def _drop(self, fault_id: int, why: str) -> FaultChange:
        return FaultChange(fault_id, self.active.pop(fault_id).kind, CLEARED, why)
