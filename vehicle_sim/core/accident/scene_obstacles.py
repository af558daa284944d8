"""Scripted accident vehicles as obstacles for the traffic agents (issue 11).

The traffic kernel's neighbour indices (lane leaders of 004's driver law, the corridor cone, the
junction checks) see every active row of the agent store; GHOST rows are obstacles only (never
driven or moved: core/traffic/kernels/step.py). For one traffic step the scene's vehicles are
written into free rows as GHOSTs with their current state (``SceneObstacles.install``) and freed
again after it (``remove``), so the agents brake for a scripted vehicle in their lane ahead as
for any leader, and a crashed scripted vehicle stays an obstacle (crashed agents already are:
core/traffic/crashed.py). The rows are gone before the traffic's outputs are read, so they are
never published or handed over as traffic agents.

Lane of a vehicle (what "in an agent's lane" means): the lane of the nearest path point among
the lanes whose heading is within ``HEADING_TOL_RAD`` of the vehicle's (so a car crossing a
junction is on its own connector, not on the crossing one), the nearest lane of any heading if
there is none within ``NEAR_M`` (a crashed car turned sideways still blocks the lane it is on).
"""
from __future__ import annotations

import math

import numpy as np

from vehicle_sim.core.traffic.kernels import layout as lay
from vehicle_sim.core.traffic.kernels.lane_path import project
from vehicle_sim.core.traffic.sim import TrafficSim

HEADING_TOL_RAD = math.radians(45.0)  # a choice: half of a right-angle turn
NEAR_M = 3.0  # a choice: under one lane width (3.5 m) from the lane's centre line


class SceneObstacles:
    """Installs and removes the scene's vehicles as GHOST rows of one TrafficSim."""

    def __init__(self, sim: TrafficSim):
        self.sim = sim
        net = sim.network.net
        self._pt_lane = np.full(len(net.pts), -1, dtype=np.int64)
        for lane in range(net.lane_f.shape[0]):
            p0, n = net.lane_i[lane, lay.LI_P0], net.lane_i[lane, lay.LI_NP]
            self._pt_lane[p0:p0 + n] = lane
        self._rows: np.ndarray = np.zeros(0, dtype=np.int64)
        self._uids: np.ndarray = np.zeros(0, dtype=np.int64)

    def lane_of(self, x: float, y: float, yaw: float) -> tuple[int, float, float]:
        """(lane, s [m], lateral offset [m], + left) of a vehicle at (x, y) heading yaw."""
        net = self.sim.network.net
        pts = net.pts
        d2 = (pts[:, lay.PT_X] - x) ** 2 + (pts[:, lay.PT_Y] - y) ** 2
        dh = np.abs(np.angle(np.exp(1j * (pts[:, lay.PT_HEADING] - yaw))))
        aligned = np.where(dh <= HEADING_TOL_RAD, d2, np.inf)
        k = int(np.argmin(aligned))
        if not aligned[k] <= NEAR_M ** 2:
            k = int(np.argmin(d2))
        lane = int(self._pt_lane[k])
        s_m, lat = project(pts, net.lane_i, lane, float(pts[k, lay.PT_S]), x, y)
        return lane, float(s_m), float(lat)

    def install(self, agents: dict[str, np.ndarray]) -> None:
        """Write the vehicles (AccidentScene.agents()'s format) as GHOST rows for one step."""
        self.remove()
        n = len(agents["uid"])
        if n == 0:
            return
        store = self.sim.store
        rows = store.free_slots(n)
        if len(rows) < n:
            raise RuntimeError(f"agent capacity {store.capacity} exhausted by the scene's "
                               f"{n} vehicles")
        af, ai = store.af, store.ai
        af[:, rows] = 0.0
        ai[:, rows] = 0
        for k, i in enumerate(rows.tolist()):
            x, y, yaw = (float(agents[c][k]) for c in ("x", "y", "yaw"))
            lane, s_m, lat = self.lane_of(x, y, yaw)
            af[[lay.AF_X, lay.AF_Y, lay.AF_YAW, lay.AF_S, lay.AF_LAT_OFF], i] = x, y, yaw, s_m, lat
            af[lay.AF_U, i], af[lay.AF_V, i] = agents["speed"][k], agents["lateral_speed"][k]
            af[lay.AF_R, i] = agents["yaw_rate"][k]
            af[lay.AF_LENGTH, i], af[lay.AF_WIDTH, i] = agents["length"][k], agents["width"][k]
            ai[lay.AI_LANE, i], ai[lay.AI_UID, i] = lane, agents["uid"][k]
            ai[lay.AI_NEXT, i] = -1
            ai[lay.AI_CRASHED, i] = int(agents["crashed"][k])
            ai[lay.AI_DYN, i] = lay.DYN_SINGLE_TRACK
        ai[lay.AI_ACTIVE, rows] = lay.GHOST
        self._rows, self._uids = rows, np.asarray(agents["uid"], dtype=np.int64).copy()

    def remove(self) -> None:
        """Free the rows of the last ``install`` (those the traffic did not free itself)."""
        if len(self._rows) == 0:
            return
        ai = self.sim.store.ai
        mine = self._rows[(ai[lay.AI_ACTIVE, self._rows] == lay.GHOST)
                          & (ai[lay.AI_UID, self._rows] == self._uids)]
        ai[:, mine] = 0
        ai[lay.AI_NEXT, mine] = -1
        self._rows = self._uids = np.zeros(0, dtype=np.int64)

    def step(self, agents: dict[str, np.ndarray], dt_s: float, ego) -> None:
        """One traffic step with the vehicles as obstacles (install, TrafficSim.step, remove)."""
        self.install(agents)
        try:
            self.sim.step(dt_s, ego)
        finally:
            self.remove()
