"""Crashed traffic agents (004 sec. 7: after an impact the references switch off and pure
dynamics take over): the traffic kernel no longer drives or moves them (AI_CRASHED), an outside
integrator (the crash physics) reads and writes their planar state here, in the map frame:
x, y [m], yaw [rad], vx, vy [m/s] (map-frame velocity of the CG), yaw_rate [rad/s].

A crashed agent stays an obstacle: every state written is projected onto the nearest lane
(lane, s, lateral offset), so the agents on that lane brake for it as for a leader, and the cone
check of the others sees its footprint; the traffic node publishes it as STATE_CRASHED. It is
removed after ``TrafficParams.crash_timeout_s`` of sim time, or by ``clear`` (reset); the
control zone does not delete it.
"""
from __future__ import annotations

import numpy as np

from vehicle_sim.core.traffic.kernels import layout as lay
from vehicle_sim.core.traffic.kernels.lane_path import project

MAX_SPEED_MPS = 100.0  # a crashed car's state beyond these is refused (bad input, not physics)
MAX_YAW_RATE_RADPS = 50.0


class CrashedAgents:
    """The crashed-agent API on one AgentStore and its network."""

    def __init__(self, store, net):
        self.store, self.net = store, net
        li = net.lane_i
        self._pt_lane = np.full(len(net.pts), -1, dtype=np.int64)  # lane of each path point
        for lane in range(net.lane_f.shape[0]):
            self._pt_lane[li[lane, lay.LI_P0]:li[lane, lay.LI_P0] + li[lane, lay.LI_NP]] = lane

    def slots(self, uids) -> np.ndarray:
        """Slots of these uids (owned agents); ValueError naming the first unknown."""
        ai = self.store.ai
        owned = np.flatnonzero(ai[lay.AI_ACTIVE] == lay.OWNED)
        by_uid = dict(zip(ai[lay.AI_UID, owned].tolist(), owned.tolist(), strict=True))
        out = []
        for u in np.atleast_1d(np.asarray(uids, dtype=np.int64)).tolist():
            if u not in by_uid:
                raise ValueError(f"no agent with id {u} in this traffic")
            out.append(by_uid[u])
        return np.array(out, dtype=np.int64)

    def mark(self, uids, t_s: float) -> np.ndarray:
        """Switch these agents to crashed at sim time t_s [s] (their instruction ends)."""
        idx = self.slots(uids)
        ai, af = self.store.ai, self.store.af
        new = idx[ai[lay.AI_CRASHED, idx] == 0]
        ai[lay.AI_CRASHED, new], af[lay.AF_CRASH_T, new] = 1, t_s
        ai[lay.AI_INSTR, idx], af[lay.AF_INSTR_UNTIL, idx] = lay.INS_NONE, -1.0
        ai[lay.AI_COMMIT, idx] = 0
        af[lay.AF_ACCEL, idx] = 0.0
        return idx

    def mask(self) -> np.ndarray:
        ai = self.store.ai
        return (ai[lay.AI_ACTIVE] == lay.OWNED) & (ai[lay.AI_CRASHED] == 1)

    def states(self) -> dict[str, np.ndarray]:
        """uid, x, y, yaw, vx, vy, yaw_rate (map frame, SI) of every crashed agent."""
        af, ai = self.store.af, self.store.ai
        idx = np.flatnonzero(self.mask())
        yaw, u, v = af[lay.AF_YAW, idx], af[lay.AF_U, idx], af[lay.AF_V, idx]
        c, s = np.cos(yaw), np.sin(yaw)
        return {"uid": ai[lay.AI_UID, idx].copy(), "x": af[lay.AF_X, idx].copy(),
                "y": af[lay.AF_Y, idx].copy(), "yaw": yaw.copy(), "vx": c * u - s * v,
                "vy": s * u + c * v, "yaw_rate": af[lay.AF_R, idx].copy()}

    def set_states(self, uids, x, y, yaw, vx, vy, yaw_rate) -> None:
        """Write the planar states of crashed agents (map frame, SI); each is projected onto
        its nearest lane. ValueError (nothing written) for an unknown or not crashed uid,
        mismatched lengths or non-finite / out-of-bounds values."""
        idx = self.slots(uids)
        cols = [np.atleast_1d(np.asarray(a, dtype=np.float64)) for a in (x, y, yaw, vx, vy,
                                                                         yaw_rate)]
        if any(len(a) != len(idx) for a in cols):
            raise ValueError(f"set_crashed_states: {len(idx)} uids but state arrays of lengths "
                             f"{[len(a) for a in cols]}")
        if not all(np.isfinite(a).all() for a in cols):
            raise ValueError("set_crashed_states: non-finite state")
        x, y, yaw, vx, vy, r = cols
        if np.any(np.hypot(vx, vy) > MAX_SPEED_MPS) or np.any(np.abs(r) > MAX_YAW_RATE_RADPS):
            raise ValueError(f"set_crashed_states: speed above {MAX_SPEED_MPS:g} m/s or yaw rate "
                             f"above {MAX_YAW_RATE_RADPS:g} rad/s")
        not_crashed = idx[self.store.ai[lay.AI_CRASHED, idx] == 0]
        if len(not_crashed):
            raise ValueError(f"agent {int(self.store.ai[lay.AI_UID, not_crashed[0]])} is not "
                             "crashed (mark_crashed first)")
        af, ai = self.store.af, self.store.ai
        yaw = np.arctan2(np.sin(yaw), np.cos(yaw))
        c, s = np.cos(yaw), np.sin(yaw)
        af[lay.AF_X, idx], af[lay.AF_Y, idx], af[lay.AF_YAW, idx] = x, y, yaw
        af[lay.AF_U, idx], af[lay.AF_V, idx] = c * vx + s * vy, -s * vx + c * vy
        af[lay.AF_R, idx] = r
        for k, i in enumerate(idx.tolist()):
            lane, s_m, lat = self.nearest_lane(float(x[k]), float(y[k]))
            ai[lay.AI_LANE, i], af[lay.AF_S, i], af[lay.AF_LAT_OFF, i] = lane, s_m, lat

    def nearest_lane(self, x: float, y: float) -> tuple[int, float, float]:
        """(lane, s [m], lateral offset [m], + left) of the lane path nearest to (x, y)."""
        pts = self.net.pts
        k = int(np.argmin((pts[:, 0] - x) ** 2 + (pts[:, 1] - y) ** 2))
        lane = int(self._pt_lane[k])
        s_m, lat = project(pts, self.net.lane_i, lane, float(pts[k, 3]), x, y)
        return lane, float(s_m), float(lat)

    def timed_out(self, t_s: float, timeout_s: float) -> np.ndarray:
        """Mask of crashed agents marked at least ``timeout_s`` before ``t_s``."""
        return self.mask() & (t_s - self.store.af[lay.AF_CRASH_T] >= timeout_s - 1e-9)
