"""Agent storage: struct-of-arrays with preallocated capacity, and fixed-size hand-over records.

``af[FIELD, i]`` (float64) and ``ai[FIELD, i]`` (int64) hold agent i; each field is a contiguous
row. Pose (x, y, yaw) is the CG in the map frame (ENU, rad); (u, v, r) are body-frame velocities
[m/s, m/s, rad/s] of 004 eqs. 1-3; ``s`` is the arc length [m] of the CG's projection on ``lane``.
A record (``pack``) is the agent's float row followed by its int row as float64: 8 * N_REC bytes.
"""
from __future__ import annotations

import numpy as np

from vehicle_sim.core.traffic.params import DriverProfile, TrafficParams

# float fields: state, driver memory, then per-agent driver parameters (instance data)
(X, Y, YAW, U, V, R, S, DELTA, DELTA_P_PREV, AR_PREV, LAT_OFF, WAIT_T, TICKET, ACCEL,
 TS, D0, CD_STEER, A_M, B_COMF, T_HW, S0, V_FACTOR, A_LAT, YELLOW_DEC, RED_RUN, STOP_SPEED,
 GW_SPEED, CROSS_FACTOR, CD_ACC, LENGTH, WIDTH) = range(31)
N_F = 31
PROFILE_FIELDS = ((TS, "lookahead_time_s"), (D0, "lookahead_min_m"), (CD_STEER, "steer_d_gain_s"),
                  (A_M, "accel_mean_mps2"), (B_COMF, "comfort_decel_mps2"),
                  (T_HW, "time_headway_s"), (S0, "min_gap_m"), (V_FACTOR, "speed_factor"),
                  (A_LAT, "lateral_accel_mps2"), (YELLOW_DEC, "yellow_stop_decel_mps2"),
                  (RED_RUN, "red_run_distance_m"), (STOP_SPEED, "stop_sign_speed_mps"),
                  (GW_SPEED, "give_way_speed_mps"), (CROSS_FACTOR, "crossing_speed_factor"),
                  (CD_ACC, "accel_d_gain_s"))
# int fields
(ACTIVE, LANE, NEXT, UID, PROFILE, IGNORE_SIGNS, COMMIT, GO, DYN, HOPS, REMOVE) = range(11)
N_I = 11
FREE, OWNED, GHOST = 0, 1, 2
AGGRESSIVE, MODERATE, PASSIVE = 0, 1, 2
PROFILE_NAMES = ("aggressive", "moderate", "passive")
N_REC = N_F + N_I


class AgentStore:
    """Preallocated agent arrays (no per-agent Python objects)."""

    def __init__(self, capacity: int):
        self.af = np.zeros((N_F, capacity))
        self.ai = np.zeros((N_I, capacity), dtype=np.int64)
        self.ai[NEXT] = -1
        self.capacity = capacity

    def free_slots(self, n: int) -> np.ndarray:
        """Up to ``n`` indices of free slots."""
        return np.flatnonzero(self.ai[ACTIVE] == FREE)[:n]

    def active(self, kind: int = OWNED) -> np.ndarray:
        """Indices of agents of the given kind (OWNED or GHOST)."""
        return np.flatnonzero(self.ai[ACTIVE] == kind)


def draw_profiles(params: TrafficParams, n: int, rng: np.random.Generator,
                  force: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Profile codes (shares of ``params``, or all ``force``), parameter rows
    (len(PROFILE_FIELDS), n) randomised by +-spread, and ignore-sign flags."""
    u = rng.random(n)
    code = np.where(u < params.share_aggressive, AGGRESSIVE,
                    np.where(u < params.share_aggressive + params.share_passive, PASSIVE, MODERATE))
    if force is not None:
        code = np.full(n, force)
    profiles: tuple[DriverProfile, ...] = (params.aggressive, params.moderate, params.passive)
    table = np.array([[getattr(p, name) for _, name in PROFILE_FIELDS] for p in profiles])
    scale = 1.0 + params.spread * (2.0 * rng.random((len(PROFILE_FIELDS), n)) - 1.0)
    values = table[code].T * scale
    ignore = np.array([p.ignores_signs_when_clear for p in profiles])[code].astype(np.int64)
    return code.astype(np.int64), values, ignore


def pack(store: AgentStore, idx: np.ndarray) -> np.ndarray:
    """Records (len(idx), N_REC) float64 of the given agents (8 * N_REC bytes each)."""
    return np.concatenate((store.af[:, idx].T, store.ai[:, idx].T.astype(np.float64)), axis=1)


def unpack(store: AgentStore, records: np.ndarray, kind: int) -> np.ndarray:
    """Write records into free slots as OWNED or GHOST agents; returns the slots used."""
    records = np.atleast_2d(np.asarray(records, dtype=np.float64))
    if records.shape[1] != N_REC:
        raise ValueError(f"agent records must have {N_REC} columns, got {records.shape[1]}")
    if not np.isfinite(records).all():
        raise ValueError("agent records contain NaN or inf")
    slots = store.free_slots(len(records))
    if len(slots) < len(records):
        raise RuntimeError(f"agent capacity {store.capacity} exhausted")
    store.af[:, slots] = records[:, :N_F].T
    store.ai[:, slots] = np.rint(records[:, N_F:]).astype(np.int64).T
    store.ai[ACTIVE, slots] = kind
    return slots
