"""Agent storage: struct-of-arrays with preallocated capacity, and fixed-size hand-over records.

``af[AF_*, i]`` (float64) and ``ai[AI_*, i]`` (int64) hold agent i; each field is a contiguous
row (the field indices and their frames are in ``kernels.layout``).
A record (``pack``) is the agent's float row followed by its int row as float64: 8 * N_REC bytes.
"""
from __future__ import annotations

import numpy as np

from vehicle_sim.core.traffic.kernels.layout import (
    AF_A_LAT,
    AF_A_M,
    AF_B_COMF,
    AF_CD_ACC,
    AF_CD_STEER,
    AF_CROSS_FACTOR,
    AF_D0,
    AF_GW_SPEED,
    AF_RED_RUN,
    AF_S0,
    AF_STOP_SPEED,
    AF_T_HW,
    AF_TS,
    AF_V_FACTOR,
    AF_X,
    AF_Y,
    AF_YELLOW_DEC,
    AI_ACTIVE,
    AI_NEXT,
    FREE,
    N_AF,
    N_AI,
    OWNED,
)
from vehicle_sim.core.traffic.params import DriverProfile, TrafficParams

PROFILE_FIELDS = ((AF_TS, "lookahead_time_s"), (AF_D0, "lookahead_min_m"),
                  (AF_CD_STEER, "steer_d_gain_s"), (AF_A_M, "accel_mean_mps2"),
                  (AF_B_COMF, "comfort_decel_mps2"), (AF_T_HW, "time_headway_s"),
                  (AF_S0, "min_gap_m"), (AF_V_FACTOR, "speed_factor"),
                  (AF_A_LAT, "lateral_accel_mps2"), (AF_YELLOW_DEC, "yellow_stop_decel_mps2"),
                  (AF_RED_RUN, "red_run_distance_m"), (AF_STOP_SPEED, "stop_sign_speed_mps"),
                  (AF_GW_SPEED, "give_way_speed_mps"), (AF_CROSS_FACTOR, "crossing_speed_factor"),
                  (AF_CD_ACC, "accel_d_gain_s"))
AGGRESSIVE, MODERATE, PASSIVE = 0, 1, 2
PROFILE_NAMES = ("aggressive", "moderate", "passive")
N_REC = N_AF + N_AI


class AgentStore:
    """Preallocated agent arrays (no per-agent Python objects)."""

    def __init__(self, capacity: int):
        self.af = np.zeros((N_AF, capacity))
        self.ai = np.zeros((N_AI, capacity), dtype=np.int64)
        self.ai[AI_NEXT] = -1
        self.capacity = capacity

    def free_slots(self, n: int) -> np.ndarray:
        """Up to ``n`` indices of free slots."""
        return np.flatnonzero(self.ai[AI_ACTIVE] == FREE)[:n]

    def active(self, kind: int = OWNED) -> np.ndarray:
        """Indices of agents of the given kind (OWNED or GHOST)."""
        return np.flatnonzero(self.ai[AI_ACTIVE] == kind)


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


def record_positions(records: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Map positions x, y [m] of the agents in records (``pack``)."""
    return records[:, AF_X], records[:, AF_Y]


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
    store.af[:, slots] = records[:, :N_AF].T
    store.ai[:, slots] = np.rint(records[:, N_AF:]).astype(np.int64).T
    store.ai[AI_ACTIVE, slots] = kind
    return slots


CORE_UID_BLOCK_BITS = 40  # sim.UID_BLOCK = 1 << 40 (uid = creating owner << 40 | counter)
ID_COUNTER_BITS = 24  # TrafficAgent.id = creating owner << 24 | counter (uint32, <= 256 owners)


def agent_ids(uid: np.ndarray) -> np.ndarray:
    """uint32 message ids (TrafficAgent.id) from core uids: stable across hand-over (the uid
    travels with the agent). Unique while a shard has created fewer than 2**24 agents."""
    uid = np.asarray(uid, dtype=np.int64)
    owner = uid >> CORE_UID_BLOCK_BITS
    return ((owner << ID_COUNTER_BITS) | (uid & ((1 << ID_COUNTER_BITS) - 1))).astype(np.uint32)
