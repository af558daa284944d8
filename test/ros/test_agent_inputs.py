"""The agents on the road from every shard's arrays (nodes.agent_inputs.AgentSnapshots): the
newest set per owner, an emptied shard's agents gone at once, a stale set dropped in a line."""
from __future__ import annotations

from rclpy.serialization import serialize_message

from vehicle_sim.msg import TrafficAgent, TrafficAgentArray
from vehicle_sim.nodes import conversions as conv
from vehicle_sim.nodes.agent_cdr import read_agents
from vehicle_sim.nodes.agent_inputs import AgentSnapshots

MS = 1_000_000


def array(source: str, t_ns: int, owned: list[tuple[int, int]], ghosts: tuple[int, ...] = ()):
    """The agents of an array of ``source`` at t_ns with agents (id, owner), as a reader reads
    them from the bytes."""
    msg = TrafficAgentArray(source=source, agents=[
        *(TrafficAgent(id=i, owner=o, speed=float(t_ns)) for i, o in owned),
        *(TrafficAgent(id=i, owner=9, ghost=True) for i in ghosts)])
    msg.header.stamp = conv.stamp(t_ns)
    return read_agents(serialize_message(msg))


def ids(snapshots: AgentSnapshots, t_ns: int, timeout_ns: int = 500 * MS) -> list[int]:
    return sorted(snapshots.current(t_ns, timeout_ns)[1]["id"].tolist())


def test_an_emptied_shard_drops_its_agents_at_once_and_keeps_the_others():
    s = AgentSnapshots()
    s.update(array("traffic_0", 0, [(1, 0), (2, 0)], ghosts=(3,)))
    s.update(array("traffic_1", 0, [(3, 1)], ghosts=(1, 2)))
    assert ids(s, 10 * MS) == [1, 2, 3]  # ghosts left out
    s.update(array("traffic_0", 50 * MS, []))  # its agents all left (no owner named)
    assert ids(s, 60 * MS) == [3]
    s.update(array("traffic_1", 100 * MS, [(3, 1), (1, 1)]))  # 1 came back, handed to shard 1
    assert ids(s, 110 * MS) == [1, 3]


def test_mid_hand_over_an_agent_is_taken_from_the_newest_array():
    s = AgentSnapshots()
    s.update(array("traffic_0", 100 * MS, [(1, 0), (2, 0)]))
    s.update(array("traffic_1", 50 * MS, [(2, 1), (4, 1)]))
    stamps, rows = s.current(120 * MS, 500 * MS)
    got = {int(i): (int(t), float(v)) for i, t, v in zip(rows["id"], stamps, rows["speed"],
                                                         strict=True)}
    assert got == {1: (100 * MS, 100e6), 2: (100 * MS, 100e6), 4: (50 * MS, 50e6)}


def test_a_set_too_old_for_its_use_is_dropped_in_a_line():
    lines: list[str] = []
    s = AgentSnapshots(lines.append, "the contact checks")
    s.update(array("traffic", 0, [(1, 0), (2, 0)]))
    assert ids(s, 400 * MS) == [1, 2] and not lines
    assert ids(s, 740 * MS) == []
    assert lines == ["traffic/agents of shard 0 are +0.74 s from the time they are used at "
                     "(timeout 0.5 s): its 2 agents are left out of the contact checks"]
    assert ids(s, 800 * MS) == [] and len(lines) == 1  # once per dropped set
