"""Columnar input of the accident detector (issue 14: no Python object per body and update).

The bodies of one update are a (8, n) float64 array, one row per quantity (rows ``X`` ...
``YAW_RATE``, contiguous, as the numba broad phase takes them), plus an integer id per body and a
lookup from id to name. The finiteness check and both broad phases (bodies among themselves, and
bodies against the static objects) run on these arrays; the detector makes ``Body`` objects only
for the candidate pairs they return (:class:`vehicle_sim.core.accident.detect.AccidentDetector`).

Frame and units as in ``detect``: map frame (ENU), centre x, y [m], yaw [rad], box length and
width [m], centre velocity vx, vy [m/s] in the map frame, yaw rate [rad/s].
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numba import njit

from vehicle_sim.core.traffic.collisions import overlapping_pairs

X, Y, YAW, LENGTH, WIDTH, VX, VY, YAW_RATE = range(8)  # rows of Bodies.state
N_ROWS = 8


@dataclass(frozen=True)
class Bodies:
    """The bodies of one update: ``ids`` (n,) int64, unique; ``name_of(id)`` their names (a
    detector takes an id as the same body, with the same name, in every update); ``state``
    (8, n) float64, rows X .. YAW_RATE."""

    ids: np.ndarray
    name_of: Callable[[int], str]
    state: np.ndarray

    def __post_init__(self) -> None:
        object.__setattr__(self, "ids", np.asarray(self.ids, dtype=np.int64).reshape(-1))
        object.__setattr__(self, "state", np.ascontiguousarray(self.state, dtype=np.float64))
        if self.state.shape != (N_ROWS, len(self.ids)):
            raise ValueError(f"state must be ({N_ROWS}, {len(self.ids)}), got "
                             f"{self.state.shape}")

    @classmethod
    def from_columns(cls, ids, name_of: Callable[[int], str], x, y, yaw, length, width,
                     vx, vy, yaw_rate) -> Bodies:
        """From one array (or scalar) per quantity, in the order of the rows."""
        ids = np.asarray(ids, dtype=np.int64).reshape(-1)
        state = np.empty((N_ROWS, len(ids)))
        for row, col in enumerate((x, y, yaw, length, width, vx, vy, yaw_rate)):
            state[row] = col
        return cls(ids, name_of, state)

    def name(self, row: int) -> str:
        return self.name_of(int(self.ids[row]))

    def row_of(self, body_id: int) -> int | None:
        """Row of the body with that id, None if absent."""
        rows = np.flatnonzero(self.ids == body_id)
        return int(rows[0]) if len(rows) else None

    def values(self, row: int) -> list[float]:
        """x, y, yaw, length, width, vx, vy, yaw rate of one body as Python floats."""
        return self.state[:, row].tolist()


class NameIds:
    """An id per body name, the same in every update: ``Body`` lists as ``Bodies``."""

    def __init__(self) -> None:
        self._ids: dict[str, int] = {}
        self._next_id = 0

    def columns(self, bodies: Sequence) -> Bodies:
        """The ``Body`` records ``bodies`` (unique names) as columns."""
        ids = self._ids
        if len(ids) > 4 * len(bodies) + 1024:  # bounded: forget the names gone
            self._ids = ids = {b.name: ids[b.name] for b in bodies if b.name in ids}
        for b in bodies:
            if b.name not in ids:
                ids[b.name], self._next_id = self._next_id, self._next_id + 1
        row_ids = [ids[b.name] for b in bodies]
        state = np.array([(b.x_m, b.y_m, b.yaw_rad, b.length_m, b.width_m, b.vx_mps, b.vy_mps,
                           b.yaw_rate_radps) for b in bodies], dtype=float).reshape(-1, N_ROWS)
        return Bodies(row_ids, dict(zip(row_ids, (b.name for b in bodies), strict=True))
                      .__getitem__, state.T)


def bad_rows(state: np.ndarray) -> np.ndarray:
    """Rows (body indices) with a non-finite value or an empty box (length or width <= 0)."""
    if state.shape[1] == 0:
        return np.zeros(0, np.int64)
    if math.isfinite(float(state.sum())) and state[LENGTH].min() > 0.0 and \
            state[WIDTH].min() > 0.0:  # the common case in one pass (a sum may overflow: check)
        return np.zeros(0, np.int64)
    return np.flatnonzero(~np.isfinite(state).all(axis=0) | (state[LENGTH] <= 0)
                          | (state[WIDTH] <= 0))


def body_pairs(state: np.ndarray, diagonal_m: np.ndarray) -> np.ndarray:
    """(k, 2) row pairs (i < j) whose spheres and oriented boxes overlap (004 broad + narrow
    phase, core.traffic.collisions); ``diagonal_m``: hypot(length, width) of each body."""
    if state.shape[1] < 2:
        return np.zeros((0, 2), dtype=np.int64)
    cell = max(1.0, float(diagonal_m.max()))  # >= any sum of radii
    return overlapping_pairs(state[X], state[Y], state[YAW], state[LENGTH], state[WIDTH], cell)


class StaticBoxes:
    """Centre and half extents [m] of each static's axis-aligned box, kept while the same
    statics come (the map's: every update of a run)."""

    def __init__(self) -> None:
        self._key: tuple = ()
        self._box = np.zeros((4, 0))  # rows x, y, half extent along x, along y

    def of(self, statics: Sequence) -> np.ndarray:
        """(4, m) boxes of ``statics`` (``Body`` records)."""
        key = tuple(statics)
        if self._key != key:
            self._key = key
            self._box = np.array([
                (o.x_m, o.y_m, 0.5 * (o.length_m * abs(math.cos(o.yaw_rad))
                                      + o.width_m * abs(math.sin(o.yaw_rad))),
                 0.5 * (o.length_m * abs(math.sin(o.yaw_rad))
                        + o.width_m * abs(math.cos(o.yaw_rad)))) for o in statics]
            ).reshape(-1, 4).T.copy()
        return self._box


@njit(cache=True)
def _near_statics(x, y, r, box):
    """(k, 2) (body row, static index) pairs, body-major, with |dx| <= r + half extent along x
    and |dy| <= r + half extent along y (the body's bounding circle against the box)."""
    out = []
    for i in range(x.shape[0]):
        for j in range(box.shape[1]):
            if abs(x[i] - box[0, j]) <= r[i] + box[2, j] and \
                    abs(y[i] - box[1, j]) <= r[i] + box[3, j]:
                out.append((i, j))
    res = np.empty((len(out), 2), np.int64)
    for k in range(len(out)):
        res[k, 0], res[k, 1] = out[k]
    return res


def static_pairs(state: np.ndarray, diagonal_m: np.ndarray, box: np.ndarray) -> np.ndarray:
    """(k, 2) (body row, static index) pairs whose bounding circle and axis-aligned box
    overlap; ``box``: StaticBoxes.of."""
    if state.shape[1] == 0 or box.shape[1] == 0:
        return np.zeros((0, 2), dtype=np.int64)
    return _near_statics(state[X], state[Y], 0.5 * diagonal_m, box)


def warm_up() -> None:
    """Compile (or load from the cache) both broad phases now, not at the first contact."""
    z = np.zeros(2)
    overlapping_pairs(z, z + 1.0, z, z + 1.0, z + 1.0, 10.0)
    _near_statics(z, z, z + 1.0, np.ones((4, 1)))
