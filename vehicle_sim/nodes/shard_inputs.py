"""What a traffic shard in lockstep needs to adopt its neighbours' agents identically in every run.

In lockstep a shard publishes, at every step, one hand-over message to every other shard (empty
when no agent left for it) and one ghost message. Frame t of a shard then uses what each other
shard sent up to the frame before, t_prev: that shard's ack of t_prev names its newest step
(``LockstepAck.output_stamp``), and the frame waits until it holds that step's hand-over and
ghost messages from it (lockstep_inputs.PeerInputs; the sender is ``TrafficHandover.from_node``).
Without lockstep the shards adopt whatever has arrived (shard_link), which depends on timing.
"""
from __future__ import annotations

import numpy as np

from vehicle_sim.nodes.lockstep_inputs import PeerInputs


class ShardInputs(PeerInputs):
    def __init__(self, peers: tuple[str, ...]):
        super().__init__(peers, ("handover", "ghosts"))

    def on_handover(self, peer: str, stamp_ns: int, records: np.ndarray) -> bool:
        """Hold a hand-over addressed to this shard; False if ``peer`` is not an input."""
        return self.hold("handover", peer, stamp_ns, records)

    def on_ghosts(self, peer: str, stamp_ns: int, records: np.ndarray) -> bool:
        return self.hold("ghosts", peer, stamp_ns, records)

    def release_records(self, prev_ns: int | None) -> tuple[list[tuple[int, np.ndarray]],
                                                           dict[str, np.ndarray]]:
        """([(sender's step stamp, hand-over records)] to adopt, in stamp order; per peer with
        a new step, its newest ghost table) for the frame after ``prev_ns`` (call after
        ``complete(prev_ns)``)."""
        out = self.release(prev_ns)
        ghosts = {peer: rec for _, peer, rec in out["ghosts"]}  # stamp order: newest wins
        return [(s, rec) for s, _, rec in out["handover"]], ghosts
