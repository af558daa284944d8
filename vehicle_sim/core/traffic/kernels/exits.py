"""Exit choice at lane ends (004 "Nodes": configured exit percentages), drawn per agent from a
deterministic hash of (seed, uid, lanes driven) so every shard and every run draws alike."""
from __future__ import annotations

import numpy as np
from numba import njit

from vehicle_sim.core.traffic.kernels.layout import LI_NSUCC, LI_SUCC0


@njit(cache=True)
def hash_uniform(seed, uid, hops):
    """Deterministic uniform [0, 1) from (seed, agent uid, lane count) by splitmix64."""
    z = (np.uint64(seed) * np.uint64(0x9E3779B97F4A7C15)
         + np.uint64(uid) * np.uint64(0xBF58476D1CE4E5B9)
         + np.uint64(hops) * np.uint64(0x94D049BB133111EB) + np.uint64(0x632BE59BD9B4E019))
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    return float(z >> np.uint64(11)) / 9007199254740992.0


@njit(cache=True)
def choose_exit(net, lane, x):
    """Successor whose cumulative probability bracket holds x in [0, 1); -1 at a dead end."""
    k0, n = net.lane_i[lane, LI_SUCC0], net.lane_i[lane, LI_NSUCC]
    for k in range(k0, k0 + n):
        if x < net.succ_cum[k]:
            return net.succ[k]
    return net.succ[k0 + n - 1] if n > 0 else -1
