"""The traffic agents currently on the road, from the ``traffic/agents`` arrays of every shard.

Each TrafficAgentArray is the complete set of agents its shard owns at its stamp (plus read-only
``ghost`` copies of neighbours, skipped here). The latest array of each owner replaces that
owner's previous set, so an agent the traffic removed disappears at once (it does not linger until
a timeout); an agent handed over between shards is taken from the newest array holding it.
An owner that a source's newer array no longer holds (its agents all left) is gone at once.
Owners silent for longer than the timeout (a stopped shard, or a traffic that lags) are
dropped; a dropped set of agents is said in a line (``warn``): a traffic that lags that far
behind (thousands of agents on a loaded host) leaves them out of what the reader does with them
(contact checks, the ego's leaders).

The sets are numpy rows (agent_cdr.AGENT) read from the arrays' bytes (agent_cdr.read_agents):
a reader of thousands of agents at 20 Hz cannot afford a Python object per agent.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from vehicle_sim.nodes.agent_cdr import AGENT, Agents


class AgentSnapshots:
    """Latest agent set per owning shard."""

    def __init__(self, warn: Callable[[str], None] | None = None, use: str = "") -> None:
        # owner -> (stamp [ns], rows (AGENT), the source whose array held them)
        self._by_owner: dict[int, tuple[int, np.ndarray, str]] = {}
        self._warn, self._use = warn, use  # a line per dropped set, and what they miss
        self.version = 0  # changes whenever the sets do (a reader may cache what it built)

    def update(self, agents: Agents) -> None:
        self.version += 1
        t_ns = agents.stamp_ns
        rows = agents.rows[~agents.rows["ghost"]]
        owners = np.unique(rows["owner"]).tolist()
        for owner in owners:
            if owner not in self._by_owner or self._by_owner[owner][0] <= t_ns:
                self._by_owner[owner] = (t_ns, rows[rows["owner"] == owner], agents.source)
        # an owner whose set came from this source and which it sends no agent of now: its
        # agents all left (the set is empty, not stale)
        for owner, (stamp, _, source) in list(self._by_owner.items()):
            if source == agents.source and stamp <= t_ns and owner not in owners:
                del self._by_owner[owner]

    def current(self, t_ns: int, timeout_ns: int) -> tuple[np.ndarray, np.ndarray]:
        """(stamp [ns] (n,), rows (n,) AGENT) of every agent of owners heard within timeout_ns
        of t_ns (``expire``); an id present in several owners' sets (mid hand-over) is taken
        from the newest (the first of the newest)."""
        self.expire(t_ns, timeout_ns)
        if not self._by_owner:
            return np.zeros(0, np.int64), np.zeros(0, AGENT)
        sets = list(self._by_owner.values())
        stamps = np.concatenate([np.full(len(r), s, np.int64) for s, r, _ in sets])
        rows = np.concatenate([r for _, r, _ in sets])
        ids = rows["id"]
        if len(np.unique(ids)) == len(ids):
            return stamps, rows
        # newest first, then in order: the first row of each id is the one kept
        order = np.lexsort((np.arange(len(ids)), -stamps, ids))
        first = np.ones(len(order), bool)
        first[1:] = ids[order][1:] != ids[order][:-1]
        keep = np.sort(order[first])
        return stamps[keep], rows[keep]

    def expire(self, t_ns: int, timeout_ns: int) -> None:
        """Drop the sets of owners not heard within timeout_ns of t_ns, each said in a line (a
        reader that caches what it built from the sets asks this, then ``version``)."""
        stale = [(o, v) for o, v in self._by_owner.items() if abs(t_ns - v[0]) > timeout_ns]
        for owner, (stamp, rows, _) in stale:
            del self._by_owner[owner]
            self.version += 1
            if self._warn is not None and len(rows):
                self._warn(f"traffic/agents of shard {owner} are {(t_ns - stamp) * 1e-9:+.2f} s "
                           f"from the time they are used at (timeout {timeout_ns * 1e-9:g} s): "
                           f"its {len(rows)} agents are left out of {self._use}")
