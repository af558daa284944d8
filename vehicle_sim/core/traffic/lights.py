"""Traffic-light regulation of paper 004 sec. 6.4 (numpy, a few hundred lights per call).

The master light is the entry light of the nearest junction ahead of the ego on its street and
direction. At every junction the cycle C is shared among the roads with entry lights: each road
gets C / n_groups, green then ``yellow_s`` yellow then ``all_red_s`` red (clearance); the other
roads are red. Each junction's reference light (the entry light heading most like the master)
starts its slot ``offset = distance(master, reference) / offset_speed`` after the master, i.e.
an offset proportional to distance. Pedestrian lights are the inverse: green only while the
vehicle light of their lane is red. Only lights in the given node set are simulated; the others
are DARK (-1). States: GREEN 0, YELLOW 1, RED 2, DARK -1.
"""
from __future__ import annotations

import math

import numpy as np

from vehicle_sim.core.traffic.light_states import DARK, GREEN, RED, YELLOW
from vehicle_sim.core.traffic.network import Network
from vehicle_sim.core.traffic.params import LightParams


class LightController:
    """Computes all light states from the simulation time and the ego pose."""

    def __init__(self, network: Network, params: LightParams):
        self.p = params
        self.node = network.light_node
        self.group = network.light_group
        self.xy = network.light_xy
        lanes = np.array(network.light_lane, dtype=np.int64)
        self.heading = np.array([network.paths[ln][-1, 2] for ln in lanes]).reshape(-1)
        self.n_groups = np.array(network.node_groups, dtype=np.int64)
        self.light_of_lane = {int(ln): k for k, ln in enumerate(lanes)}
        self.ped_vehicle = np.array([self.light_of_lane.get(ln, -1) for ln in network.ped_lane],
                                    dtype=np.int64)
        self.master = 0
        self._offsets = np.zeros(0)  # green-wave offsets [s] per light (offsets())
        self._offsets_master = -1  # the master the cached offsets were computed for

    def select_master(self, ego_x: float, ego_y: float, ego_yaw: float) -> int:
        """Index of the master light (004): nearest entry light ahead, same direction."""
        if len(self.xy) == 0:
            return -1
        dx, dy = self.xy[:, 0] - ego_x, self.xy[:, 1] - ego_y
        ahead = dx * math.cos(ego_yaw) + dy * math.sin(ego_yaw)
        lateral = np.abs(-dx * math.sin(ego_yaw) + dy * math.cos(ego_yaw))
        same_dir = np.cos(self.heading - ego_yaw) > 0.7
        ok = same_dir & (ahead > 0) & (lateral < 15.0)
        dist = np.hypot(dx, dy)
        self.master = int(np.argmin(np.where(ok, dist, dist + 1e6)))
        return self.master

    def offsets(self) -> np.ndarray:
        """Per-light start time [s] of its junction's reference slot relative to the master
        (cached: they change only with the master, and recomputing them, a lexsort and a
        unique, was two thirds of every light update)."""
        if self._offsets_master != self.master:
            self._offsets, self._offsets_master = self._compute_offsets(), self.master
        return self._offsets

    def _compute_offsets(self) -> np.ndarray:
        m = self.master
        score = np.cos(self.heading - self.heading[m])
        score[m] = 2.0  # the master is the reference light of its own junction
        order = np.lexsort((-score, self.node))  # per node, best-aligned light first
        nodes, first = np.unique(self.node[order], return_index=True)
        ref = order[first]
        ref_group = np.zeros(len(self.n_groups), dtype=np.int64)
        ref_group[nodes] = self.group[ref]
        dist = np.zeros(len(self.n_groups))
        dist[nodes] = np.hypot(*(self.xy[ref] - self.xy[m]).T)
        self._ref_group = ref_group
        return dist[self.node] / self.p.offset_speed_mps

    def states(self, t: float, active_nodes: np.ndarray | None = None) -> np.ndarray:
        """Vehicle light states at time t [s]; lights of nodes not in ``active_nodes`` are DARK."""
        if len(self.xy) == 0:
            return np.zeros(1, dtype=np.int64)
        c, yl, ar = self.p.cycle_s, self.p.yellow_s, self.p.all_red_s
        off = self.offsets()
        n = self.n_groups[self.node]
        slot = c / n
        slot_idx = (self.group - self._ref_group[self.node]) % n
        tau = np.mod(t - off - slot_idx * slot, c)
        st = np.where(tau < slot - yl - ar, GREEN, np.where(tau < slot - ar, YELLOW, RED))
        if active_nodes is not None:
            st = np.where(active_nodes[self.node], st, DARK)
        return st.astype(np.int64)

    def pedestrian_states(self, vehicle_states: np.ndarray) -> np.ndarray:
        """Pedestrian lights: GREEN only while the vehicle light on their lane is RED (004)."""
        veh = np.where(self.ped_vehicle >= 0, vehicle_states[np.maximum(self.ped_vehicle, 0)], DARK)
        return np.where(veh == RED, GREEN, np.where(veh == DARK, DARK, RED)).astype(np.int64)
