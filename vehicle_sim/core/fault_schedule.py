"""Faults and instructor actions at given simulation times: a scenario's ``schedule``.

A scenario file (config/scenarios/*.yaml) may list entries under ``schedule:``; each is one
FaultCommand (the fault by its constant's name, e.g. ``PROVOKE_ACCIDENT``, ``BRAKE_FAILURE``,
``CLEAR``) for one target at a simulation time ``at_s``. The accident node publishes every
entry ``PUBLISH_LEAD_S`` of simulation time before it is due, with the command's ``at`` field set;
the node owning the target holds a command whose ``at`` lies ahead of its own simulation time in a
:class:`PendingFaults` queue and applies it at its first step with t >= at. So a scheduled fault
takes effect at the same step in every run (in lockstep: byte for byte), whatever the DDS
delivery time; an entry due before ``PUBLISH_LEAD_S`` goes out when the clock starts and applies
on receipt if that is later.
"""
from __future__ import annotations

from dataclasses import dataclass

from vehicle_sim.core.config import spec
from vehicle_sim.core.faults import MAX_DURATION_S, FaultRequest
from vehicle_sim.core.run_summary import MAX_RUN_DURATION_S
from vehicle_sim.core.sensors.faults import (
    MAX_ACCEL_BIAS_STEP_MPS2,
    MAX_GYRO_BIAS_STEP_RADPS,
    MAX_NOISE_SCALE,
    MAX_POSITION_JUMP_M,
)

PUBLISH_LEAD_S = 2.0  # sim time between publishing an entry and its ``at`` (a choice: >> DDS
# delivery on loopback, ~1 ms, and >= 100 lockstep frames of 20 ms)
MAX_PENDING = 1000  # commands a target holds for later; more are refused (bounded memory)
MAX_ENTRIES = 10_000  # schedule entries a scenario may list
FAULT_ID_MAX = 2**32 - 1  # FaultCommand.id is uint32
# |value| of any kind: the widest bound a target checks (the rest: brake_failure 1, link_delay
# 10 s); the target still checks its own
MAX_VALUE = max(MAX_ACCEL_BIAS_STEP_MPS2, MAX_GYRO_BIAS_STEP_RADPS, MAX_NOISE_SCALE)


@dataclass(frozen=True)
class ScheduledFault:
    """One entry of a scenario's ``schedule``: the FaultCommand fields, and when."""

    at_s: float = spec(unit="s", ge=0.0, le=MAX_RUN_DURATION_S)
    """simulation time to apply it"""
    target: str = spec()
    """gps, imu, vehicle, platform, wheel, traffic, or a node name (links)"""
    fault: str = spec()
    """the FaultCommand constant's name, e.g. PROVOKE_ACCIDENT or CLEAR"""
    id: int = spec(ge=0, le=FAULT_ID_MAX)
    """fault id (CLEAR with id 0 clears the target)"""
    channel: str = spec("")
    """channel, tyre or agent selector, as in FaultCommand"""
    value: float = spec(0.0, ge=-MAX_VALUE, le=MAX_VALUE)
    """magnitude in the unit of the channel"""
    vector: tuple[float, float, float] = spec((0.0, 0.0, 0.0), unit="m", ge=-MAX_POSITION_JUMP_M,
                                              le=MAX_POSITION_JUMP_M)
    """POSITION_JUMP offset, ENU"""
    duration_s: float = spec(0.0, unit="s", ge=0.0, le=MAX_DURATION_S)
    """of simulation time, 0 = until cleared"""

    def __post_init__(self) -> None:
        if not self.fault.isidentifier() or self.fault != self.fault.upper():
            raise ValueError(f"fault {self.fault!r} is not a FaultCommand constant name "
                             f"(upper case, e.g. BRAKE_FAILURE)")
        if self.id == 0 and self.fault != "CLEAR":
            raise ValueError(f"{self.fault} at {self.at_s} s: id 0 is only for CLEAR")

    @property
    def at_ns(self) -> int:
        return round(self.at_s * 1e9)

    def request(self) -> FaultRequest:
        """The core request the target's fault book takes (kind = the name in lower case)."""
        return FaultRequest(self.id, self.fault.lower(), self.channel, self.value,
                            self.duration_s, self.vector)


def publish_order(entries: tuple[ScheduledFault, ...]) -> list[ScheduledFault]:
    """Entries by due time; entries due at the same time keep the order of the file."""
    return sorted(entries, key=lambda e: e.at_ns)


class PendingFaults:
    """Requests held until their simulation time (one target's queue; one thread calls it)."""

    def __init__(self, limit: int = MAX_PENDING):
        self.limit = limit
        self._held: list[tuple[int, int, FaultRequest]] = []  # (at_ns, arrival, request)
        self._arrivals = 0

    def __len__(self) -> int:
        return len(self._held)

    def hold(self, req: FaultRequest, at_ns: int) -> str | None:
        """Keep ``req`` until ``at_ns``; why it cannot be held (the queue is full), else None."""
        if len(self._held) >= self.limit:
            return f"{self.limit} commands already wait for their time; refused"
        self._arrivals += 1
        self._held.append((at_ns, self._arrivals, req))
        self._held.sort(key=lambda h: h[:2])
        return None

    def due(self, t_ns: int) -> list[FaultRequest]:
        """The held requests with at <= t_ns, in time then arrival order (removed)."""
        k = next((i for i, h in enumerate(self._held) if h[0] > t_ns), len(self._held))
        out, self._held = [h[2] for h in self._held[:k]], self._held[k:]
        return out

    def clear(self) -> None:
        self._held.clear()
