"""The traffic agents currently on the road, from the ``traffic/agents`` arrays of every shard.

Each TrafficAgentArray is the complete set of agents its shard owns at its stamp (plus read-only
``ghost`` copies of neighbours, skipped here). The latest array of each owner replaces that
owner's previous set, so an agent the traffic removed disappears at once (it does not linger until
a timeout); an agent handed over between shards is taken from the newest array holding it.
An owner that a source's newer array no longer holds (its agents all left) is gone at once.
Owners silent for longer than the timeout (a stopped shard, or a traffic that lags) are
dropped; a dropped set of agents is said in a line (``warn``):
a traffic that lags that far behind (thousands of agents on a loaded host) leaves them out of
what the reader does with them (contact checks, the ego's leaders).
"""
from __future__ import annotations

from collections.abc import Callable

from vehicle_sim.msg import TrafficAgent, TrafficAgentArray
from vehicle_sim.nodes import conversions as conv


class AgentSnapshots:
    """Latest agent set per owning shard."""

    def __init__(self, warn: Callable[[str], None] | None = None, use: str = "") -> None:
        # owner -> (stamp [ns], agents, the source whose array held them)
        self._by_owner: dict[int, tuple[int, list[TrafficAgent], str]] = {}
        self._warn, self._use = warn, use  # a line per dropped set, and what they miss
        self.version = 0  # changes whenever the sets do (a reader may cache what it built)

    def update(self, msg: TrafficAgentArray) -> None:
        self.version += 1
        t_ns = conv.to_ns(msg.header.stamp)
        fresh: dict[int, list[TrafficAgent]] = {}
        for a in msg.agents:
            if not a.ghost:
                fresh.setdefault(a.owner, []).append(a)
        for owner, agents in fresh.items():
            if owner not in self._by_owner or self._by_owner[owner][0] <= t_ns:
                self._by_owner[owner] = (t_ns, agents, msg.source)
        # an owner whose set came from this source and which it sends no agent of now: its
        # agents all left (the set is empty, not stale)
        for owner, (stamp, _, source) in list(self._by_owner.items()):
            if source == msg.source and stamp <= t_ns and owner not in fresh:
                del self._by_owner[owner]

    def current(self, t_ns: int, timeout_ns: int) -> list[tuple[int, TrafficAgent]]:
        """(stamp [ns], agent) of every agent of owners heard within timeout_ns of t_ns; an id
        present in several owners' sets (mid hand-over) is taken from the newest."""
        stale = [(o, v) for o, v in self._by_owner.items() if abs(t_ns - v[0]) > timeout_ns]
        for owner, (stamp, agents, _) in stale:
            del self._by_owner[owner]
            self.version += 1
            if self._warn is not None and agents:
                self._warn(f"traffic/agents of shard {owner} are {(t_ns - stamp) * 1e-9:+.2f} s "
                           f"from the time they are used at (timeout {timeout_ns * 1e-9:g} s): "
                           f"its {len(agents)} agents are left out of {self._use}")
        out: dict[int, tuple[int, TrafficAgent]] = {}
        for stamp, agents, _ in self._by_owner.values():
            for a in agents:
                if a.id not in out or out[a.id][0] < stamp:
                    out[a.id] = (stamp, a)
        return list(out.values())
