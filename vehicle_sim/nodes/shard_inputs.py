"""What a traffic shard in lockstep needs to adopt its neighbours' agents identically in every run.

In lockstep a shard publishes, at every step, one hand-over message to every other shard (empty
when no agent left for it) and one ghost message. Frame t of a shard then uses what each other
shard sent up to the frame before, t_prev: that shard's ack of t_prev names its newest step
(``LockstepAck.output_stamp``, see lockstep_inputs.AckBook), and the frame waits until it holds
that step's hand-over and ghost messages from it. Each topic arrives in order from one writer,
so holding the newest means holding every earlier one. Without lockstep the shards adopt
whatever has arrived (traffic_node), which depends on timing.
"""
from __future__ import annotations

import numpy as np

from vehicle_sim.msg import LockstepAck
from vehicle_sim.nodes.lockstep_inputs import AckBook

Held = list[tuple[int, np.ndarray]]  # (sender's step stamp [ns], records (n, N_REC))


class ShardInputs:
    def __init__(self, peers: tuple[str, ...]):
        self.acks = AckBook(peers)
        self._handovers: dict[str, Held] = {p: [] for p in peers}
        self._ghosts: dict[str, Held] = {p: [] for p in peers}
        self._released = dict.fromkeys(peers, 0)  # per peer: stamps up to here handed out [ns]

    def on_ack(self, msg: LockstepAck) -> None:
        self.acks.on_ack(msg)

    def on_handover(self, peer: str, stamp_ns: int, records: np.ndarray) -> bool:
        """Hold a hand-over addressed to this shard; False if ``peer`` is not an input."""
        return _hold(self._handovers, peer, stamp_ns, records)

    def on_ghosts(self, peer: str, stamp_ns: int, records: np.ndarray) -> bool:
        return _hold(self._ghosts, peer, stamp_ns, records)

    def complete(self, prev_ns: int | None) -> bool:
        """Every other shard acknowledged ``prev_ns`` and its messages of its newest step then
        are here (the first frame needs nothing)."""
        if prev_ns is None:
            return True
        named = self.acks.named(prev_ns)
        if named is None:
            return False
        return all(newest <= self._released[p]
                   or (any(s == newest for s, _ in self._handovers[p])
                       and any(s == newest for s, _ in self._ghosts[p]))
                   for p, newest in named.items())

    def release(self, prev_ns: int | None) -> tuple[list[np.ndarray], dict[str, np.ndarray]]:
        """(hand-over record tables to adopt, in peer and stamp order; per peer with a new
        step, its newest ghost table) for the frame after ``prev_ns`` (call after
        ``complete(prev_ns)``)."""
        if prev_ns is None:
            return [], {}
        named = self.acks.named(prev_ns)
        self.acks.forget(prev_ns)
        adopt: list[np.ndarray] = []
        ghosts: dict[str, np.ndarray] = {}
        for peer in self.acks.peers:
            limit = named[peer]
            if limit <= self._released[peer]:
                continue
            self._released[peer] = limit
            adopt += [rec for _, rec in _take(self._handovers[peer], limit)]
            due = _take(self._ghosts[peer], limit)
            if due:
                ghosts[peer] = due[-1][1]
        return adopt, ghosts


def _hold(held: dict[str, Held], peer: str, stamp_ns: int, records: np.ndarray) -> bool:
    if peer not in held:
        return False
    held[peer].append((stamp_ns, records))
    return True


def _take(held: Held, limit_ns: int) -> Held:
    """Remove and return the entries stamped up to ``limit_ns``, oldest first."""
    due = sorted((h for h in held if h[0] <= limit_ns), key=lambda h: h[0])
    held[:] = [h for h in held if h[0] > limit_ns]
    return due
