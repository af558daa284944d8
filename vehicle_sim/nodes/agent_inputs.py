"""The traffic agents currently on the road, from the ``traffic/agents`` arrays of every shard.

Each TrafficAgentArray is the complete set of agents its shard owns at its stamp (plus read-only
``ghost`` copies of neighbours, skipped here). The latest array of each owner replaces that
owner's previous set, so an agent the traffic removed disappears at once (it does not linger until
a timeout); an agent handed over between shards is taken from the newest array holding it.
Owners silent for longer than the timeout (a stopped shard, or one whose agents all left: its
empty array names no owner) are dropped.
"""
from __future__ import annotations

from vehicle_sim.msg import TrafficAgent, TrafficAgentArray
from vehicle_sim.nodes import conversions as conv


class AgentSnapshots:
    """Latest agent set per owning shard."""

    def __init__(self) -> None:
        self._by_owner: dict[int, tuple[int, list[TrafficAgent]]] = {}  # owner -> (stamp, agents)

    def update(self, msg: TrafficAgentArray) -> None:
        t_ns = conv.to_ns(msg.header.stamp)
        fresh: dict[int, list[TrafficAgent]] = {}
        for a in msg.agents:
            if not a.ghost:
                fresh.setdefault(a.owner, []).append(a)
        for owner, agents in fresh.items():
            if owner not in self._by_owner or self._by_owner[owner][0] <= t_ns:
                self._by_owner[owner] = (t_ns, agents)

    def current(self, t_ns: int, timeout_ns: int) -> list[tuple[int, TrafficAgent]]:
        """(stamp [ns], agent) of every agent of owners heard within timeout_ns of t_ns; an id
        present in several owners' sets (mid hand-over) is taken from the newest."""
        self._by_owner = {o: v for o, v in self._by_owner.items()
                          if abs(t_ns - v[0]) <= timeout_ns}
        out: dict[int, tuple[int, TrafficAgent]] = {}
        for stamp, agents in self._by_owner.values():
            for a in agents:
                if a.id not in out or out[a.id][0] < stamp:
                    out[a.id] = (stamp, a)
        return list(out.values())
