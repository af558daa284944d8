"""What a lockstep peer needs to see the same inputs from other peers in every run.

In frame t a reader uses the outputs its input peers published up to the frame before, t_prev:
each peer's ack of t_prev names the stamp of its newest output (``LockstepAck.output_stamp``),
and the reader waits until it holds that peer's messages with that stamp. DDS keeps each topic of
one writer in order but not the order between topics: this is the missing part. Messages that
arrive early (a peer already working on frame t) are held back until a later frame.

``AckBook`` keeps the acks; ``LockstepInputs`` holds the traffic outputs the ego driver reads (a
traffic node in lockstep publishes one agent array and one light array at every step); the
traffic shards' hand-overs and ghosts are held by ``shard_inputs.ShardInputs``.
"""
from __future__ import annotations

from collections import Counter

from vehicle_sim.msg import LockstepAck, TrafficAgentArray, TrafficLightArray
from vehicle_sim.nodes import conversions as conv


class AckBook:
    """The acks of the named peers: frame [ns] -> stamp of the newest output [ns]."""

    def __init__(self, peers: tuple[str, ...]):
        self.peers = tuple(peers)
        self._acks: dict[str, dict[int, int]] = {p: {} for p in self.peers}

    def on_ack(self, msg: LockstepAck) -> None:
        if msg.node in self._acks:
            self._acks[msg.node][conv.to_ns(msg.stamp)] = conv.to_ns(msg.output_stamp)

    def named(self, prev_ns: int) -> dict[str, int] | None:
        """Per peer, the output stamp named by its ack of ``prev_ns``, or None until every peer
        has acknowledged it. A peer that never saw tick ``prev_ns`` (it started late and
        acknowledges later ticks only) counts with its first ack after it, so a run never
        waits for an ack that cannot come."""
        out = {}
        for peer, acks in self._acks.items():
            later = [f for f in acks if f >= prev_ns]
            if not later:
                return None
            out[peer] = acks[min(later)]
        return out

    def forget(self, prev_ns: int) -> None:
        """Drop the acks up to ``prev_ns``: frames are released in order, never twice."""
        for acks in self._acks.values():
            for frame in [f for f in acks if f <= prev_ns]:
                del acks[frame]


class LockstepInputs:
    def __init__(self, peers: tuple[str, ...]):
        self.acks = AckBook(peers)
        self._agents: list[tuple[int, TrafficAgentArray]] = []
        self._lights: list[tuple[int, TrafficLightArray]] = []
        self._released_ns = 0  # outputs up to this stamp have been handed out already

    @property
    def peers(self) -> tuple[str, ...]:
        return self.acks.peers

    def on_ack(self, msg: LockstepAck) -> None:
        self.acks.on_ack(msg)

    def on_agents(self, msg: TrafficAgentArray) -> None:
        self._agents.append((conv.to_ns(msg.header.stamp), msg))

    def on_lights(self, msg: TrafficLightArray) -> None:
        self._lights.append((conv.to_ns(msg.header.stamp), msg))

    def complete(self, prev_ns: int | None) -> bool:
        """Every input peer acknowledged frame ``prev_ns`` and its outputs of then are here."""
        if prev_ns is None:
            return True  # the first frame uses no traffic input
        named = self.acks.named(prev_ns)
        if named is None:
            return False
        need = Counter(s for s in named.values() if s > self._released_ns)
        return all(sum(t == s for t, _ in held) >= n
                   for held in (self._agents, self._lights) for s, n in need.items())

    def release(self, prev_ns: int | None) -> tuple[list[TrafficAgentArray],
                                                   list[TrafficLightArray]]:
        """The agent and light arrays to apply for the frame after ``prev_ns``, in stamp order
        (call after ``complete(prev_ns)``); later ones stay held."""
        if prev_ns is None:
            return [], []
        limit = max(self.acks.named(prev_ns).values(), default=-1)
        self.acks.forget(prev_ns)
        self._released_ns = max(self._released_ns, limit)
        out = []
        for held in (self._agents, self._lights):
            due = sorted((m for m in held if m[0] <= limit), key=lambda m: m[0])
            held[:] = [m for m in held if m[0] > limit]
            out.append([msg for _, msg in due])
        return out[0], out[1]
