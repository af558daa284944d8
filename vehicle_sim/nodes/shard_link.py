"""A traffic shard's exchange with the other shards (paper 003): hand-overs and ghosts.

After each step the agents that left this shard's sectors go to their new owner on
``traffic/handover`` (reliable, depth 100); received records are adopted at the start of the
first own step later than the sender's stamp. Every heartbeat the agents near the shard's border
go to every other shard on ``traffic/ghosts`` (to_owner TO_ALL) and are installed there as
read-only obstacles (TrafficSim.set_ghosts).

Lockstep (``lockstep_inputs`` = the other shards' node names): a hand-over goes to every other
shard at every step, empty or not, and the ghosts at every step (the frames are the heartbeat);
frame t adopts what the others sent up to the frame before (shard_inputs.ShardInputs), so the
shards exchange the same agents in every run. On a stall the newest step's messages go out again
(``resend``; readers drop the repeats), for a reader that matched late. With frames longer than
a traffic step, an agent handed over in a frame is adopted in the next one, so it skips the steps
in between. Without lockstep, whatever has arrived is used.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
from rclpy.node import Node
from rclpy.publisher import Publisher

from vehicle_sim.core.traffic.agents import record_positions
from vehicle_sim.core.traffic.node_params import TrafficNodeParams, shard_of_sector
from vehicle_sim.core.traffic.sim import TrafficSim
from vehicle_sim.core.traffic.zone import Sectors
from vehicle_sim.msg import LockstepAck, TrafficHandover
from vehicle_sim.nodes import conversions as conv
from vehicle_sim.nodes import qos
from vehicle_sim.nodes import traffic_msgs as tm
from vehicle_sim.nodes.shard_inputs import ShardInputs


class ShardLink:
    def __init__(self, node: Node, p: TrafficNodeParams, sim: TrafficSim, sectors: Sectors,
                 heartbeat: int, pump: Callable[[], None]):
        """``pump``: called when a held lockstep input arrived (the node's LockstepPeer.pump)."""
        self.node, self.p, self.sim, self.sectors = node, p, sim, sectors
        self.heartbeat, self._pump = heartbeat, pump
        self._ghosts: dict[int | str, np.ndarray] = {}  # by sender (shard or node name)
        self._pending: list[tuple[int, np.ndarray]] = []  # (sender's stamp, hand-over records)
        self._sent: list[tuple[Publisher, TrafficHandover]] = []  # the newest step's messages
        self.inputs = ShardInputs(p.lockstep_inputs) if p.lockstep else None
        self._pub_handover = node.create_publisher(TrafficHandover, "traffic/handover",
                                                   qos.HANDOVER)
        self._pub_ghosts = node.create_publisher(TrafficHandover, "traffic/ghosts", qos.HANDOVER)
        node.create_subscription(TrafficHandover, "traffic/handover", self._on_handover,
                                 qos.HANDOVER)
        node.create_subscription(TrafficHandover, "traffic/ghosts", self._on_ghosts, qos.HANDOVER)
        if self.inputs is not None:  # the other shards' acks name their newest step
            node.create_subscription(LockstepAck, "/sim/lockstep_ack", self._on_ack,
                                     qos.LOCKSTEP_ACK)

    # ---- lockstep ----------------------------------------------------------------------------
    def _on_ack(self, msg: LockstepAck) -> None:
        self.inputs.on_ack(msg)
        self._pump()

    def ready(self, prev_ns: int | None) -> bool:
        """The other shards' messages up to lockstep frame ``prev_ns`` are in."""
        return self.inputs is None or self.inputs.complete(prev_ns)

    def frame(self, prev_ns: int | None) -> None:
        """Start of the lockstep frame after ``prev_ns``: take what was sent up to it."""
        adopt, ghosts = self.inputs.release_records(prev_ns)
        self._pending += adopt
        self._set_ghosts(ghosts)

    def resend(self) -> None:
        """The newest step's hand-overs and ghosts again (lockstep stall)."""
        for pub, msg in self._sent:
            pub.publish(msg)

    # ---- steps -------------------------------------------------------------------------------
    def before_step(self, t_ns: int) -> None:
        """Adopt the agents handed over after a step before ``t_ns``: their records hold the
        state at the sender's step, so they are stepped here from the next step on (never
        twice for one instant, whichever shard runs ahead)."""
        ready = [rec for stamp_ns, rec in self._pending if stamp_ns < t_ns]
        self._pending = [(s, rec) for s, rec in self._pending if s >= t_ns]
        for rec in ready:
            try:
                self.sim.accept(rec)
            except (ValueError, RuntimeError) as exc:  # bad records or capacity exhausted
                self.node.get_logger().error(f"hand-over refused, agents lost: {exc}")

    def after_step(self, t_ns: int, steps: int) -> None:
        """Send the departures of step number ``steps`` (at ``t_ns``), and the ghosts when due."""
        self._sent = []
        self._send_departures(t_ns)
        if steps % self.heartbeat == 0 or self.p.lockstep:
            self._publish(self._pub_ghosts, self._msg(
                self.sim.export_ghosts(self.p.ghost_margin_m), TrafficHandover.TO_ALL, t_ns))

    def owners(self, a: dict[str, np.ndarray]) -> np.ndarray:
        """Owning shard of each published agent (ghosts: the shard of their sector)."""
        owner = np.full(len(a["uid"]), self.p.shard_index)
        g = a["ghost"]
        if g.any():
            owner[g] = shard_of_sector(self.sectors, self.sectors.of(a["x"][g], a["y"][g]),
                                       self.p.shard_count)
        return owner

    # ---- messages ----------------------------------------------------------------------------
    def _send_departures(self, t_ns: int) -> None:
        rec = self.sim.take_departures()
        if not len(rec) and not self.p.lockstep:
            return
        dest = shard_of_sector(self.sectors, self.sectors.of(*record_positions(rec)),
                               self.p.shard_count)
        others = [i for i in range(self.p.shard_count) if i != self.p.shard_index]
        for to in others if self.p.lockstep else np.unique(dest).tolist():
            self._publish(self._pub_handover, self._msg(rec[dest == to], to, t_ns))

    def _publish(self, pub: Publisher, msg: TrafficHandover) -> None:
        pub.publish(msg)
        self._sent.append((pub, msg))

    def _msg(self, records: np.ndarray, to: int, t_ns: int) -> TrafficHandover:
        msg = tm.handover_msg(records, self.p.shard_index, to, t_ns, self.p.frame_id)
        msg.from_node = self.node.get_name()
        return msg

    def _records(self, msg: TrafficHandover, what: str) -> np.ndarray | None:
        try:
            return tm.handover_records(msg)
        except ValueError as exc:
            self.node.get_logger().error(f"{what} refused: {exc}", throttle_duration_sec=5.0)
            return None

    def _on_handover(self, msg: TrafficHandover) -> None:
        if msg.to_owner != self.p.shard_index or msg.from_owner == self.p.shard_index:
            return
        rec = self._records(msg, "hand-over (agents lost)")
        if rec is None:
            return
        stamp_ns = conv.to_ns(msg.header.stamp)
        if self.inputs is None:
            self._pending.append((stamp_ns, rec))
        elif self.inputs.on_handover(msg.from_node, stamp_ns, rec):
            self._pump()
        else:
            self.node.get_logger().error(f"hand-over from {msg.from_node!r}, not in "
                                         f"lockstep_inputs {list(self.p.lockstep_inputs)}: "
                                         "agents lost")

    def _on_ghosts(self, msg: TrafficHandover) -> None:
        if msg.from_owner == self.p.shard_index:
            return
        rec = self._records(msg, "ghosts")
        if rec is None:
            return
        if self.inputs is None:
            self._set_ghosts({msg.from_owner: rec})
        elif self.inputs.on_ghosts(msg.from_node, conv.to_ns(msg.header.stamp), rec):
            self._pump()

    def _set_ghosts(self, new: dict[int | str, np.ndarray]) -> None:
        """Install the newest ghosts of the senders in ``new``, the others' kept."""
        if not new:
            return
        self._ghosts.update(new)
        try:
            self.sim.set_ghosts(np.concatenate(list(self._ghosts.values())))
        except (ValueError, RuntimeError) as exc:
            self.node.get_logger().warning(f"ghosts ignored: {exc}", throttle_duration_sec=5.0)
