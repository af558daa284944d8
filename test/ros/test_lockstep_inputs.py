"""What lockstep readers hold back until a frame's inputs are complete (no DDS: the messages are
built here and handed over in the orders DDS may deliver them)."""
from __future__ import annotations

import numpy as np
from rclpy.serialization import serialize_message

from vehicle_sim.msg import LockstepAck, TrafficAgentArray, TrafficLightArray
from vehicle_sim.nodes.agent_cdr import Agents, read_agents
from vehicle_sim.nodes.conversions import stamp
from vehicle_sim.nodes.lockstep_inputs import AckBook, LockstepInputs
from vehicle_sim.nodes.shard_inputs import ShardInputs

MS = 1_000_000


def ack(node: str, frame_ms: int, output_ms: int) -> LockstepAck:
    return LockstepAck(node=node, stamp=stamp(frame_ms * MS), output_stamp=stamp(output_ms * MS))


def records(*values: float) -> np.ndarray:
    return np.array(values, dtype=float).reshape(-1, 1)


def test_ack_book_waits_for_every_peer_and_tolerates_a_missed_tick():
    book = AckBook(("a", "b"))
    book.on_ack(ack("a", 20, 0))
    assert book.named(20 * MS) is None, "b has not acknowledged"
    book.on_ack(ack("x", 20, 0))  # not an input: ignored
    assert book.named(20 * MS) is None
    book.on_ack(ack("b", 40, 50))  # b never saw tick 20 (it started late): its next ack counts
    assert book.named(20 * MS) == {"a": 0, "b": 50 * MS}
    book.forget(20 * MS)
    assert book.named(40 * MS) is None, "a's ack of 20 is gone and a has not acked 40"


def test_shard_inputs_release_only_what_the_other_shard_sent_up_to_the_frame_before():
    inputs = ShardInputs(("traffic_1",))
    assert inputs.complete(None) and inputs.release_records(None) == ([], {})
    # shard 1 stepped at 50 ms and acknowledged frame 60 naming that step; its messages of
    # step 50 arrive after the ack, the step-100 ones (next frame) even before them
    inputs.on_ack(ack("traffic_1", 60, 50))
    assert not inputs.complete(60 * MS)
    assert inputs.on_handover("traffic_1", 100 * MS, records(3.0))
    assert inputs.on_ghosts("traffic_1", 100 * MS, records(30.0))
    assert not inputs.complete(60 * MS), "the messages of step 50 are not in"
    assert inputs.on_handover("traffic_1", 50 * MS, records(1.0, 2.0))
    assert not inputs.complete(60 * MS), "the ghosts of step 50 are not in"
    assert inputs.on_ghosts("traffic_1", 50 * MS, records(20.0))
    assert not inputs.on_ghosts("traffic_9", 50 * MS, records(0.0)), "not an input"
    assert inputs.complete(60 * MS)
    adopt, ghosts = inputs.release_records(60 * MS)
    assert [(s, a.ravel().tolist()) for s, a in adopt] == [(50 * MS, [1.0, 2.0])]
    assert ghosts["traffic_1"].ravel().tolist() == [20.0]
    # frame 80: shard 1 did not step again (newest step still 50), but re-sent its step-50
    # messages after a stall: nothing new is needed and the repeats are not adopted again
    assert inputs.on_handover("traffic_1", 50 * MS, records(1.0, 2.0))
    assert inputs.on_ghosts("traffic_1", 50 * MS, records(20.0))
    inputs.on_ack(ack("traffic_1", 80, 50))
    assert inputs.complete(80 * MS) and inputs.release_records(80 * MS) == ([], {})
    # frame 100: step 100's messages, held since they arrived early, are released now (a repeat
    # of a held one is dropped)
    assert inputs.on_handover("traffic_1", 100 * MS, records(3.0))
    inputs.on_ack(ack("traffic_1", 100, 100))
    assert inputs.complete(100 * MS)
    adopt, ghosts = inputs.release_records(100 * MS)
    assert [(s, a.ravel().tolist()) for s, a in adopt] == [(100 * MS, [3.0])]
    assert ghosts["traffic_1"].ravel().tolist() == [30.0]


def arrays(t_ms: int, source: str) -> tuple[Agents, TrafficLightArray]:
    """An agent array as the ego driver reads it (from its bytes) and a light array."""
    agents, lights = TrafficAgentArray(source=source), TrafficLightArray(source=source)
    agents.header.stamp = lights.header.stamp = stamp(t_ms * MS)
    return read_agents(serialize_message(agents)), lights


def test_a_resent_array_of_one_traffic_node_does_not_stand_in_for_another_nodes_array():
    """Two traffic shards stepped at 50 ms. Shard 0's arrays arrive, then again (its resend
    after a stall), while shard 1's agent array is late: the frame is not complete until it is
    in, and each array is handed out once; a node that is not an input is ignored."""
    inputs = LockstepInputs(("traffic_0", "traffic_1"))
    a0, l0 = arrays(50, "traffic_0")
    a1, l1 = arrays(50, "traffic_1")
    for _ in range(2):
        assert inputs.on_agents(a0) and inputs.on_lights(l0)
    assert inputs.on_lights(l1)
    assert not inputs.on_agents(arrays(50, "traffic_9")[0]), "not an input"
    inputs.on_ack(ack("traffic_0", 60, 50))
    inputs.on_ack(ack("traffic_1", 60, 50))
    assert not inputs.complete(60 * MS), "shard 1's agent array is not in"
    inputs.on_agents(a1)
    assert inputs.complete(60 * MS)
    agents, lights = inputs.release_arrays(60 * MS)
    assert [id(m) for m in agents] == [id(a0), id(a1)], "once each, peers in listed order"
    assert [id(m) for m in lights] == [id(l0), id(l1)]
    inputs.on_agents(a0)  # a late repeat: dropped
    inputs.on_ack(ack("traffic_0", 80, 50))
    inputs.on_ack(ack("traffic_1", 80, 50))
    assert inputs.complete(80 * MS) and inputs.release_arrays(80 * MS) == ([], [])
