"""What a lockstep peer needs to see the same traffic inputs in every run.

In frame t a reader uses the outputs its input peers (the traffic nodes) published up to the
frame before, t_prev: each peer's ack of t_prev names the stamp of its newest output
(``LockstepAck.output_stamp``), and the reader waits until it holds one agent array and one light
array with that stamp from each peer (a traffic node in lockstep publishes both at every step).
Messages that arrive early (a peer already working on frame t) are held back until a later
frame. DDS keeps each topic in order but not the order between topics: this is the missing part.
"""
from __future__ import annotations

from collections import Counter

from vehicle_sim.msg import LockstepAck, TrafficAgentArray, TrafficLightArray
from vehicle_sim.nodes import conversions as conv


class LockstepInputs:
    def __init__(self, peers: tuple[str, ...]):
        self.peers = peers
        self._acks: dict[str, dict[int, int]] = {p: {} for p in peers}  # frame -> output [ns]
        self._agents: list[tuple[int, TrafficAgentArray]] = []
        self._lights: list[tuple[int, TrafficLightArray]] = []
        self._released_ns = 0  # outputs up to this stamp have been handed out already

    def on_ack(self, msg: LockstepAck) -> None:
        if msg.node in self._acks:
            self._acks[msg.node][conv.to_ns(msg.stamp)] = conv.to_ns(msg.output_stamp)

    def on_agents(self, msg: TrafficAgentArray) -> None:
        self._agents.append((conv.to_ns(msg.header.stamp), msg))

    def on_lights(self, msg: TrafficLightArray) -> None:
        self._lights.append((conv.to_ns(msg.header.stamp), msg))

    def complete(self, prev_ns: int | None) -> bool:
        """Every input peer acknowledged frame ``prev_ns`` and its outputs of then are here."""
        if prev_ns is None:
            return True  # the first frame uses no traffic input
        stamps = []
        for peer in self.peers:
            if prev_ns not in self._acks[peer]:
                return False
            stamps.append(self._acks[peer][prev_ns])
        need = Counter(s for s in stamps if s > self._released_ns)
        return all(sum(t == s for t, _ in held) >= n
                   for held in (self._agents, self._lights) for s, n in need.items())

    def release(self, prev_ns: int | None) -> tuple[list[TrafficAgentArray],
                                                   list[TrafficLightArray]]:
        """The agent and light arrays to apply for the frame after ``prev_ns``, in stamp order
        (call after ``complete(prev_ns)``); later ones stay held."""
        if prev_ns is None:
            return [], []
        limit = max(self._acks[p].pop(prev_ns) for p in self.peers) if self.peers else -1
        self._released_ns = max(self._released_ns, limit)
        for acks in self._acks.values():  # acks of older frames are never needed again
            for frame in [f for f in acks if f < prev_ns]:
                del acks[frame]
        out = []
        for held in (self._agents, self._lights):
            due = sorted((m for m in held if m[0] <= limit), key=lambda m: m[0])
            held[:] = [m for m in held if m[0] > limit]
            out.append([msg for _, msg in due])
        return out[0], out[1]
