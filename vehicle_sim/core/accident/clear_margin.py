"""How long the ego's crash broad phase may be skipped: a margin around a step that found
nothing near (core.accident.ego_contacts, every 1 kHz physics step).

A step with nothing within its reach looks CLEAR_MARGIN_M wider; finding nothing there either,
the next steps skip the broad phase while ``ClearMargin.holds``: the ego's displacement, its
reach and the agents' extrapolated motion since then (at most their top speed times the time,
the extrapolation age being clipped) still fit in the wider reach. The static test is a square
around the ego against boxes and the agents' a circle distance, so a query that fits inside the
wider one finds nothing the wider one did not: the skipped steps are among those the full test
finds nothing in, and return what it would (tested against it). New agent arrays, or time
going back, end the margin.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

# [m] a choice: ~50 ms at 10 m/s each way, a traffic step
CLEAR_MARGIN_M = 1.0
RETRY_NS = 10_000_000  # [ns] after a wider look that finds something, the next is this far on
ROUNDING_M = 1e-6  # [m] kept off the margin: the kernels round differently than the sum here


@dataclass(frozen=True)
class ClearMargin:
    """Nothing within ``reach_m`` (the ego's radius excluded) of the ego's centre (x_m, y_m) at
    t_ns [ns], among the statics and ``agents`` (that very object), which move at most
    ``agent_speed_mps``."""

    x_m: float
    y_m: float
    t_ns: int
    reach_m: float
    agents: object
    agent_speed_mps: float

    def holds(self, t_ns: int, x_m: float, y_m: float, reach_m: float, agents) -> bool:
        """Nothing is within ``reach_m`` of the ego at (x_m, y_m) at t_ns either."""
        if agents is not self.agents or t_ns < self.t_ns:
            return False
        spent = (math.hypot(x_m - self.x_m, y_m - self.y_m) + reach_m
                 + self.agent_speed_mps * (t_ns - self.t_ns) * 1e-9)
        return spent <= self.reach_m - ROUNDING_M
