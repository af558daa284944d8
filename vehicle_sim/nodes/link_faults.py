"""Loss of communication on one topic link (paper 003's question): FaultCommand LINK_DROP and
LINK_DELAY with target = the receiving node's name and channel = the topic as that node
subscribes it (e.g. target ``ego_driver``, channel ``traffic/agents``).

A node that takes link faults registers its gated subscriptions (``LinkFaults(node_name,
topics)``), passes every message of them through ``offer(topic, msg, stamp_ns, now_ns)`` and
calls ``release(topic, now_ns)`` as its simulation time advances; both return the messages to
use now, in arrival order. While LINK_DROP is active the messages are dropped; while LINK_DELAY
is active each is held until the node's sim time reaches its stamp + ``value`` seconds (so a
delay repeats exactly in lockstep). When the fault ends, the held messages go out at once, in
order, and the link recovers; the graph keeps running (the receiver sees stale inputs, as its own
timeouts define). Bounds: ``value`` <= MAX_DELAY_S and at most MAX_HELD messages per link (the
oldest is dropped beyond; at 20 Hz the limit holds 12.8 s of messages).

``check`` is the FaultBook check of these kinds (fault_link.FaultLink); ``update(active)`` its
``on_change``. No rclpy here: the node wires it.
"""
from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field

from vehicle_sim.core.faults import ActiveFault, FaultRequest, not_applicable

LINK_DROP, LINK_DELAY = "link_drop", "link_delay"
KINDS = (LINK_DROP, LINK_DELAY)
MAX_DELAY_S = 10.0  # a choice: well beyond every input timeout of the graph (0.5-2 s)
MAX_HELD = 256  # messages held per delayed link


@dataclass
class _Link:
    held: deque = field(default_factory=lambda: deque(maxlen=MAX_HELD))  # (due_ns, msg)
    dropped: int = 0
    delayed: int = 0


class LinkFaults:
    """The link faults of one node's gated subscriptions."""

    def __init__(self, node_name: str, topics: tuple[str, ...]):
        self.node_name = node_name
        self.links = {t: _Link() for t in topics}
        self.mode: dict[str, tuple[str, float]] = {}  # topic -> (kind, delay s) while active

    def check(self, req: FaultRequest, others: list[ActiveFault]) -> str | None:
        """Why ``req`` cannot apply (not a link kind, not a gated topic, bad delay), or None."""
        if req.kind not in KINDS:
            return not_applicable(self.node_name, KINDS)
        if req.channel not in self.links:
            return (f"channel {req.channel!r} is not a gated subscription of {self.node_name} "
                    f"(gated: {', '.join(self.links)})")
        if req.kind == LINK_DELAY and not (math.isfinite(req.value)
                                           and 0.0 < req.value <= MAX_DELAY_S):
            return f"delay value must be in (0, {MAX_DELAY_S:g}] s, got {req.value}"
        return None

    def update(self, active: list[ActiveFault]) -> None:
        """The active faults changed: the newest link fault of each topic applies."""
        self.mode = {f.request.channel: (f.kind, f.request.value) for f in active
                     if f.kind in KINDS}

    def offer(self, topic: str, msg, stamp_ns: int, now_ns: int) -> list:
        """A message of ``topic`` stamped ``stamp_ns`` arrived at sim time ``now_ns``."""
        link = self.links[topic]
        kind, delay_s = self.mode.get(topic, ("", 0.0))
        if kind == LINK_DROP:
            link.dropped += 1
            return self.release(topic, now_ns)
        if kind == LINK_DELAY:
            link.delayed += 1
            if len(link.held) == MAX_HELD:
                link.dropped += 1  # the deque drops the oldest
            link.held.append((stamp_ns + round(delay_s * 1e9), msg))
            return self.release(topic, now_ns)
        return self.release(topic, now_ns) + [msg]

    def release(self, topic: str, now_ns: int) -> list:
        """Held messages of ``topic`` due at ``now_ns`` (all of them once no delay is active:
        the link recovers in order)."""
        held = self.links[topic].held
        delayed = self.mode.get(topic, ("", 0.0))[0] == LINK_DELAY
        out = []
        while held and (not delayed or held[0][0] <= now_ns):
            out.append(held.popleft()[1])
        return out

    def counts(self, topic: str) -> tuple[int, int]:
        """(dropped, delayed) messages of ``topic`` so far."""
        link = self.links[topic]
        return link.dropped, link.delayed
