"""What a lockstep peer needs to see the same inputs from other peers in every run.

In frame t a reader uses the outputs its input peers published up to the frame before, t_prev:
each peer's ack of t_prev names the stamp of its newest output (``LockstepAck.output_stamp``),
and the reader waits until it holds that peer's message with that stamp on every channel (each
input peer publishes one message per channel at every output stamp). DDS keeps the messages of
one writer in order but not the order between topics: this is the missing part. Messages that
arrive early (a peer already working on frame t) are held back until a later frame; a message
again with a stamp already held or released (a peer's resend after a stall) is dropped.

``AckBook`` keeps the acks; ``PeerInputs`` holds messages by sender; ``LockstepInputs`` is the
ego driver's (traffic agent and light arrays, whose ``source`` names the sender); the traffic
shards' hand-overs and ghosts are held by ``shard_inputs.ShardInputs``.
"""
from __future__ import annotations

from typing import Any

from vehicle_sim.msg import LockstepAck, TrafficLightArray
from vehicle_sim.nodes import conversions as conv
from vehicle_sim.nodes.agent_cdr import Agents


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


Released = dict[str, list[tuple[int, str, Any]]]  # channel -> [(stamp [ns], peer, message)]


class PeerInputs:
    """Messages of named peers on fixed channels, released frame by frame (module docstring)."""

    def __init__(self, peers: tuple[str, ...], channels: tuple[str, ...]):
        self.acks = AckBook(peers)
        self.channels = channels
        self._held: dict[str, dict[str, list[tuple[int, Any]]]] = {
            c: {p: [] for p in self.acks.peers} for c in channels}
        self._released = dict.fromkeys(self.acks.peers, 0)  # per peer: stamps handed out [ns]

    @property
    def peers(self) -> tuple[str, ...]:
        return self.acks.peers

    def on_ack(self, msg: LockstepAck) -> None:
        self.acks.on_ack(msg)

    def hold(self, channel: str, peer: str, stamp_ns: int, item: Any) -> bool:
        """Hold ``item`` until its frame; False if ``peer`` is not an input (not held)."""
        if peer not in self._released:
            return False
        held = self._held[channel][peer]
        if stamp_ns > self._released[peer] and all(s != stamp_ns for s, _ in held):
            held.append((stamp_ns, item))
        return True

    def complete(self, prev_ns: int | None) -> bool:
        """Every input peer acknowledged ``prev_ns`` and its messages of the stamp its ack names
        are here on every channel (the first frame needs nothing)."""
        if prev_ns is None:
            return True
        named = self.acks.named(prev_ns)
        if named is None:
            return False
        return all(newest <= self._released[p]
                   or all(any(s == newest for s, _ in self._held[c][p]) for c in self.channels)
                   for p, newest in named.items())

    def release(self, prev_ns: int | None) -> Released:
        """Per channel, the messages for the frame after ``prev_ns`` in stamp order, peers in
        their listed order at one stamp (call after ``complete(prev_ns)``); later ones stay."""
        out: Released = {c: [] for c in self.channels}
        if prev_ns is None:
            return out
        named = self.acks.named(prev_ns)
        self.acks.forget(prev_ns)
        for peer in self.peers:
            limit = named[peer]
            if limit <= self._released[peer]:
                continue
            self._released[peer] = limit
            for c in self.channels:
                held = self._held[c][peer]
                out[c] += [(s, peer, m) for s, m in held if s <= limit]
                held[:] = [(s, m) for s, m in held if s > limit]
        for c in self.channels:
            out[c].sort(key=lambda e: (e[0], self.peers.index(e[1])))
        return out


class LockstepInputs(PeerInputs):
    """The ego driver's traffic inputs: one agent array and one light array per traffic step of
    every input traffic node, told apart by their ``source`` field."""

    def __init__(self, peers: tuple[str, ...]):
        super().__init__(peers, ("agents", "lights"))

    def on_agents(self, agents: Agents) -> bool:
        """Hold an agent array (read from its bytes); False if its source is not an input
        peer."""
        return self.hold("agents", agents.source, agents.stamp_ns, agents)

    def on_lights(self, msg: TrafficLightArray) -> bool:
        return self.hold("lights", msg.source, conv.to_ns(msg.header.stamp), msg)

    def release_arrays(self, prev_ns: int | None) -> tuple[list[Agents],
                                                          list[TrafficLightArray]]:
        """The agent and light arrays to apply for the frame after ``prev_ns``."""
        out = self.release(prev_ns)
        return [m for _, _, m in out["agents"]], [m for _, _, m in out["lights"]]
