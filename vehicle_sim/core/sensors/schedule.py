"""Sample timing of a sensor running at a fixed rate inside a simulation of another rate."""
from __future__ import annotations

import math

# Tolerance on sim-time comparisons [s]: far below any sensor period, above float rounding of
# sums of physics steps (1e-9 s = 1 ns).
_EPS_S = 1e-9


class Schedule:
    """Decides which calls produce a sample: the first, then one per period (1 / rate_hz).

    A call at or after the due time samples; if calls come slower than the rate, every call
    samples (no extrapolation). Returns the elapsed time since the previous sample (the noise
    processes' dt), or the nominal period for the first sample. The due times are
    ``t0 + n period`` from the first sample (or the last call that came a period late), not a
    running sum: a sum of float periods drifts past the tolerance after ~2e5 samples (18 min
    of a 200 Hz IMU) and a due sample is skipped.
    """

    def __init__(self, rate_hz: float):
        self.period_s = 1.0 / rate_hz
        self._t0_s: float | None = None  # the due times are _t0_s + n period_s
        self._n = 0
        self._last_s: float | None = None

    def _next_s(self) -> float | None:
        return None if self._t0_s is None else self._t0_s + self._n * self.period_s

    def due(self, t_s: float) -> float | None:
        """dt [s] since the previous sample if a sample is due at sim time t_s [s], else None."""
        if not math.isfinite(t_s):
            raise ValueError(f"sim time must be finite, got {t_s!r}")
        if self._last_s is not None and t_s < self._last_s:
            raise ValueError(f"sim time went backwards: {t_s} < {self._last_s} s")
        next_s = self._next_s()
        if next_s is not None and t_s < next_s - _EPS_S:
            return None
        dt_s = self.period_s if self._last_s is None else t_s - self._last_s
        if dt_s <= 0.0:
            return None
        self._n += 1
        if self._t0_s is None or self._next_s() <= t_s + _EPS_S:  # first, or a period late
            self._t0_s, self._n = t_s, 1
        self._last_s = t_s
        return dt_s
