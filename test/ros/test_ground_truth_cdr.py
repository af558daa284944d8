"""The ground truth's fast path (nodes.ground_truth_cdr) gives byte for byte what
``serialize_message`` gives for the builders' messages (ground_truth_msgs.in_range,
predicted_objects, tracked_objects), and reads a TrafficAgentArray as deserialize_message does.

Every byte but the alignment padding is compared (rmw leaves padding as it found its buffer);
the padding's place comes from a walk over the builder's message and its type's fields here,
not from the encoder, and the message read back from the encoder's bytes must equal the
builder's. Agents: a urban_grid run of the traffic core (AgentEncoder's bytes) and hand-made
ones through serialize_message (unknown kinds, ghosts, straight and turning, range edges)."""
from __future__ import annotations

import math

import numpy as np
import pytest
from rclpy.serialization import deserialize_message, serialize_message
from rosidl_parser.definition import (
    AbstractSequence,
    AbstractString,
    Array,
    BasicType,
    NamespacedType,
)

from vehicle_sim.core.traffic.sim import TrafficSim
from vehicle_sim.msg import TrafficAgent, TrafficAgentArray
from vehicle_sim.nodes import agent_cdr as ac
from vehicle_sim.nodes import traffic_msgs as tm
from vehicle_sim.paths import config_path

gt = pytest.importorskip("vehicle_sim.nodes.ground_truth_msgs")
gc = pytest.importorskip("vehicle_sim.nodes.ground_truth_cdr")

EGO = (10.0, -1.75, 0.0, 5.0)  # config/dynamics.yaml's initial pose: x, y [m], yaw, speed
SIZES = {"boolean": 1, "octet": 1, "char": 1, "uint8": 1, "int8": 1, "int16": 2, "uint16": 2,
         "int32": 4, "uint32": 4, "float": 4, "int64": 8, "uint64": 8, "double": 8}
# (horizon_s, step_s): the node's default, none, steps that do not divide exactly
PREDICTIONS = [(5.0, 0.5), (0.0, 0.5), (3.0, 0.3), (0.05, 0.05), (1.0, 1.5)]
FRAMES = ["map", "odom", ""]  # first object at 4 and 0 mod 8


def padding(msg) -> set[int]:
    """Offsets in serialize_message(msg) of its alignment padding (XCDR1, after the header)."""
    pads: list[int] = []

    def align(at: int, size: int) -> int:
        pad = -at % size
        pads.extend(range(4 + at, 4 + at + pad))
        return at + pad

    def value(v, t, at: int) -> int:
        if isinstance(t, BasicType):
            return align(at, SIZES[t.typename]) + SIZES[t.typename]
        if isinstance(t, AbstractString):
            return align(at, 4) + 4 + len(v.encode()) + 1
        if isinstance(t, NamespacedType):
            for name, slot_type in zip(v.get_fields_and_field_types(), v.SLOT_TYPES):
                at = value(getattr(v, name), slot_type, at)
            return at
        if isinstance(t, AbstractSequence):
            at = align(at, 4) + 4
        assert isinstance(t, (AbstractSequence, Array)), t
        for item in v:
            at = value(item, t.value_type, at)
        return at

    end = value(msg, NamespacedType([], "top"), 0)
    assert 4 + end == len(serialize_message(msg))
    return set(pads)


def assert_same_cdr(raw: bytes, msg) -> None:
    """``raw`` is serialize_message(msg) but for the padding, which is zero in ``raw``."""
    ref = serialize_message(msg)
    assert len(raw) == len(ref)
    keep = np.ones(len(ref), dtype=bool)
    keep[sorted(padding(msg))] = False
    mine, theirs = np.frombuffer(raw, np.uint8), np.frombuffer(ref, np.uint8)
    assert not mine[~keep].any()
    wrong = np.flatnonzero((mine != theirs) & keep)
    assert not len(wrong), f"bytes differ at {wrong[:10]} of {len(ref)}"
    assert deserialize_message(raw, type(msg)) == msg


def urban_frames() -> list[bytes]:
    """AgentEncoder's bytes of a urban_grid traffic run with the ego at its start: kinds
    cycled (with an unknown one), some ghosts, some agents off the network (lane "")."""
    sim = TrafficSim.from_files(config_path("maps/urban_grid.yaml"), None, seed=3)
    encoder = tm.AgentEncoder(sim.network.lane_names)
    out = []
    for k in range(1, 121):
        sim.step(0.05, EGO)
        if k % 40:
            continue
        a = sim.agents(include_ghosts=True)
        n = len(a["uid"])
        a["kind"] = np.resize(np.array([0, 1, 2, 3, 9], dtype=np.uint8), n)
        a["ghost"] = a["ghost"] | (np.arange(n) % 7 == 3)
        a["lane"] = np.where(np.arange(n) % 11 == 5, -1, a["lane"])
        out.append(encoder.encode(a, np.arange(n) % 3, k * 50_000_000, "map", "traffic"))
    assert len(deserialize_message(out[-1], TrafficAgentArray).agents) > 20
    return out


def agent(i: int, x: float, y: float, yaw: float, u: float, r: float, kind: int = 0,
          ghost: bool = False, lane: str = "lane_1") -> TrafficAgent:
    a = TrafficAgent(id=i, kind=kind, profile=i % 3, state=i % 3, speed=u, yaw_rate=r,
                     acceleration=-0.37 * i, length=4.2 + 0.1 * i, width=1.8, lane_id=lane,
                     owner=i % 4, ghost=ghost, fault_id=i, lateral_speed=0.03 * i - 0.1)
    a.pose.position.x, a.pose.position.y, a.pose.position.z = x, y, 0.25 * i
    a.pose.orientation.z, a.pose.orientation.w = math.sin(0.5 * yaw), math.cos(0.5 * yaw)
    return a


def hand_made() -> list[bytes]:
    """serialize_message of edge cases: straight (r 0, tiny), turning both ways, reversing,
    stopped, unknown kinds, a ghost, ids up to 2^32 - 1, lane names of every length mod 4, an
    orientation with x and y, agents on the range edge; and no agents at all."""
    agents = [agent(1, 12.0, -1.0, 0.3, 8.0, 0.0), agent(2, -5.0, 3.0, -2.9, 6.5, 4e-7, 1),
              agent(3, 40.0, 2.0, 1.2, 11.0, 0.35, 2, lane=""),
              agent(4, 0.5, -30.0, -1.0, -2.0, -0.6, 3, lane="ab"),
              agent(5, 10.0, 28.25, 3.1, 0.05, 1.7, 4, lane="abc"),
              agent(6, 3.0, 3.0, 0.0, 0.0, 0.0, 255, ghost=True, lane="abcd"),
              agent(7, 70.0, -1.75, 0.0, 13.9, -1e-6, 0),
              agent(2**32 - 1, 10.0, 28.25, -0.1, 30.0, 2.0e-6, 2)]
    agents[4].pose.orientation.x, agents[4].pose.orientation.y = 0.1, -0.2
    agents[1].owner, agents[3].owner, agents[7].owner = 3, 2**16 - 1, 1  # shards
    agents[2].fault_id, agents[5].fault_id = 2**32 - 1, 7  # instructed
    out = []
    for stamp_s, some in ((0, []), (1, agents), (2**31 - 1, agents[::-1])):
        msg = TrafficAgentArray(agents=some, source="t")
        msg.header.stamp.sec, msg.header.stamp.nanosec = stamp_s, 999_999_999
        msg.header.frame_id = "map"
        out.append(serialize_message(msg))
    return out


def range_edge(data: bytes) -> tuple[tuple[float, float], float]:
    """An ego and range [m] where numpy's hypot and math's disagree for one agent of ``data``
    (its math.hypot distance is the range): in_range must follow math."""
    msg = deserialize_message(data, TrafficAgentArray)
    rng = np.random.default_rng(1)
    for _ in range(10_000):
        a = msg.agents[rng.integers(len(msg.agents))]
        ego = (a.pose.position.x + rng.normal(0, 30), a.pose.position.y + rng.normal(0, 30))
        dx, dy = a.pose.position.x - ego[0], a.pose.position.y - ego[1]
        if float(np.hypot(dx, dy)) > math.hypot(dx, dy) and not a.ghost:
            return ego, math.hypot(dx, dy)
    raise AssertionError("no agent where numpy's hypot exceeds math's")


@pytest.fixture(scope="module")
def inputs() -> list[bytes]:
    return urban_frames() + hand_made()


@pytest.mark.parametrize("horizon_s, step_s", PREDICTIONS)
@pytest.mark.parametrize("frame", FRAMES)
def test_objects_bytes_equal_the_builders_messages(inputs, horizon_s, step_s, frame):
    encoder = gc.ObjectsEncoder(frame, horizon_s, step_s)
    for data in inputs:
        edge = range_edge(data) if len(data) > 100 else (EGO[:2], 30.0)
        for ego_xy, range_m in ((None, 30.0), (EGO[:2], 0.0), (EGO[:2], 30.0), edge):
            msg = deserialize_message(data, TrafficAgentArray)
            msg.header.frame_id = frame
            agents = gt.in_range(msg.agents, ego_xy, range_m)
            decoded = ac.decode_agents(data)
            rows = gc.in_range(decoded.rows, ego_xy, range_m)
            assert rows["id"].tolist() == [a.id for a in agents]
            assert_same_cdr(encoder.predicted_objects(decoded, rows),
                            gt.predicted_objects(agents, msg.header, horizon_s, step_s))
            assert_same_cdr(encoder.tracked_objects(decoded, rows),
                            gt.tracked_objects(agents, msg.header))


def test_range_edge_follows_math_hypot(inputs):
    """The agent at the edge is in (math.hypot <= range) though numpy's distance is beyond."""
    ego_xy, range_m = range_edge(inputs[0])
    msg = deserialize_message(inputs[0], TrafficAgentArray)
    decoded = ac.decode_agents(inputs[0])
    kept = gc.in_range(decoded.rows, ego_xy, range_m)["id"].tolist()
    assert kept == [a.id for a in gt.in_range(msg.agents, ego_xy, range_m)]
    d = np.hypot(decoded.rows["pose"][:, 0] - ego_xy[0], decoded.rows["pose"][:, 1] - ego_xy[1])
    assert len(kept) == np.count_nonzero((d <= range_m) & ~decoded.rows["ghost"]) + 1


def test_decode_equals_deserialize_message(inputs):
    for data in inputs:
        msg = deserialize_message(data, TrafficAgentArray)
        decoded = ac.decode_agents(data)
        assert (decoded.sec, decoded.nanosec, decoded.frame_id) == (
            msg.header.stamp.sec, msg.header.stamp.nanosec, msg.header.frame_id)
        rows = decoded.rows
        assert len(rows) == len(msg.agents)
        for row, a in zip(rows.tolist(), msg.agents, strict=True):
            p, q = a.pose.position, a.pose.orientation
            row = (*row[:3], tuple(row[3].tolist()), *row[4:])
            assert row == (a.id, a.kind, a.ghost, (p.x, p.y, p.z, q.x, q.y, q.z, q.w), a.speed,
                           a.yaw_rate, a.acceleration, a.length, a.width, a.lateral_speed,
                           a.owner, a.fault_id)
        assert decoded.source == msg.source
        slow = ac.rows_of(msg)  # the big-endian path: the same rows
        assert slow.rows.tobytes() == rows.tobytes() and slow.source == msg.source


def test_the_agent_count_is_read_from_the_bytes_as_deserialize_message_gives_it(inputs):
    """The monitor's count (ac.agent_count), without decoding an agent; a cut message before
    the count, or no CDR, is a ValueError."""
    for data in inputs:
        assert ac.agent_count(data) == len(deserialize_message(data, TrafficAgentArray).agents)
    msg = TrafficAgentArray(source="traffic_1", agents=[TrafficAgent(id=i) for i in range(5)])
    msg.header.frame_id = "map"
    data = serialize_message(msg)
    assert ac.agent_count(data) == 5
    with pytest.raises(ValueError, match="string|before the agents"):
        ac.agent_count(data[:20])
    with pytest.raises(ValueError, match="encapsulation ffff"):
        ac.agent_count(b"\xff\xff" + data[2:])


def test_big_endian_or_truncated_input_is_refused(inputs):
    data = inputs[1]
    assert ac.decode_agents(b"\x00\x00" + data[2:]) is None  # big endian: deserialize_message
    with pytest.raises(ValueError, match="past the end|string"):
        ac.decode_agents(data[:len(data) // 2])
    with pytest.raises(ValueError, match="encapsulation ffff"):
        ac.decode_agents(b"\xff\xff" + data[2:])  # no CDR: neither path may take it


@pytest.mark.parametrize("field, change", [
    ("yaw_rate", lambda v: np.nextafter(v, np.inf)), ("kind", lambda v: (v + 1) % 4),
    ("id", lambda v: v ^ 1), ("speed", lambda v: -v), ("length", lambda v: v + 0.5),
    ("lateral_speed", lambda v: v + 1e-9)])
def test_a_wrong_field_is_caught(inputs, field, change):
    """The comparison fails when one agent's field is off (the yaw rate by one ulp), so
    passing it means something."""
    data = inputs[-2]
    msg = deserialize_message(data, TrafficAgentArray)
    agents = gt.in_range(msg.agents, None, 0.0)
    decoded = ac.decode_agents(data)
    rows = gc.in_range(decoded.rows, None, 0.0)
    turning = int(np.flatnonzero(np.abs(rows["yaw_rate"]) > 0.1)[0])
    rows[field][turning] = change(rows[field][turning])
    encoder = gc.ObjectsEncoder("map", 5.0, 0.5)
    with pytest.raises(AssertionError):
        assert_same_cdr(encoder.predicted_objects(decoded, rows),
                        gt.predicted_objects(agents, msg.header, 5.0, 0.5))
    with pytest.raises(AssertionError):
        assert_same_cdr(encoder.tracked_objects(decoded, rows),
                        gt.tracked_objects(agents, msg.header))


def test_the_readers_refuse_a_damaged_array_as_a_value_error(inputs):
    """What the accident, dynamics and ego driver nodes read (agent_cdr.read_agents): a cut or
    hostile array, in either byte order, is a ValueError (their callback drops it with a line),
    never another exception out of the callback."""
    data = inputs[1]
    assert len(ac.read_agents(data).rows) == len(deserialize_message(
        data, TrafficAgentArray).agents)
    for bad in (data[:len(data) // 2], data[:6], b"\x00\x01\x00\x00" + b"\xff" * 64,
                b"\x00\x00\x00\x00" + b"\xff" * 64, b"\x00\x00" + data[2:len(data) // 3],
                b"\xff\xff" + data[2:]):
        with pytest.raises(ValueError):
            ac.read_agents(bad)
