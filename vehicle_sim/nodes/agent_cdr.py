"""A TrafficAgentArray read straight from its CDR bytes into numpy rows, for the readers of
thousands of agents: ``deserialize_message`` builds a Python object per agent (2,000 agents:
~135 ms of the reader's thread, more than a 20 Hz traffic leaves it), this ~1-3 ms.

XCDR1 little endian after the 4-byte encapsulation header, alignment counted from the byte
after it, as traffic_msgs.AgentEncoder writes it and rmw_fastrtps hands it to a raw
subscription; big-endian bytes (another host's) go through ``deserialize_message`` and
``rows_of`` instead. Pinned field by field to deserialize_message by
test/ros/test_ground_truth_cdr.py. No Autoware import: the accident, dynamics and monitor nodes
read agents too.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass

import numpy as np

from vehicle_sim.core.rotations import yaw_from_xyzw_array
from vehicle_sim.msg import TrafficAgentArray
from vehicle_sim.nodes.state_cdr import ENCAPSULATION, header_stamp

# one TrafficAgent as decode_agents gives it (the fields its readers use)
AGENT = np.dtype([("id", "<u4"), ("kind", "u1"), ("ghost", "?"), ("pose", "<f8", 7),
                  ("speed", "<f8"), ("yaw_rate", "<f8"), ("acceleration", "<f8"),
                  ("length", "<f4"), ("width", "<f4"), ("lateral_speed", "<f8"),
                  ("owner", "<u2"), ("fault_id", "<u4")])
# a TrafficAgent's 88 fixed bytes from its pose (8-aligned): pose x y z qx qy qz qw [m],
# speed [m/s], yaw_rate [rad/s], acceleration [m/s2] float64, length, width [m] float32
_AGENT_BLOCK = np.dtype([("pose", "<f8", 7), ("speed", "<f8"), ("yaw_rate", "<f8"),
                         ("acceleration", "<f8"), ("length", "<f4"), ("width", "<f4")])


@dataclass
class Agents:
    """The agents of a TrafficAgentArray: header stamp (sec, nanosec), frame, rows (AGENT),
    and the traffic node that sent them (``source``)."""

    sec: int
    nanosec: int
    frame_id: str
    rows: np.ndarray
    source: str = ""

    @property
    def stamp_ns(self) -> int:
        return self.sec * 1_000_000_000 + self.nanosec


BIG_ENDIAN = b"\x00\x00"  # CDR big endian: deserialize_message serves


def _string(body: memoryview, at: int, order: str = "little") -> tuple[str, int]:
    """(text, offset after it) of the CDR string whose uint32 length (its NUL included) is at
    ``at``; ValueError when it does not fit in the message."""
    at = (at + 3) & -4
    size = int.from_bytes(body[at:at + 4], order)
    if not 1 <= size <= len(body) - at - 4:
        raise ValueError(f"a string of {size} bytes at byte {at} of {len(body)}")
    return bytes(body[at + 4:at + 3 + size]).decode(), at + 4 + size


def agent_count(data: bytes) -> int:
    """How many agents a TrafficAgentArray's CDR bytes announce, read from its sequence length
    (no agent decoded: 2,000 agents deserialised take ~135 ms of a reader's thread); ValueError
    when the bytes do not hold the header and source strings."""
    if data[:2] not in (ENCAPSULATION[:2], BIG_ENDIAN):
        raise ValueError(f"encapsulation {bytes(data[:2]).hex()} is not XCDR1 (CDR)")
    order = "little" if data[:2] == ENCAPSULATION[:2] else "big"
    return _head(memoryview(data)[4:], len(data), order)[3]


def _head(body: memoryview, size: int, order: str = "little") -> tuple[str, str, int, int]:
    """(frame_id, source, offset of the first agent, agent count) of a TrafficAgentArray's body
    (after the encapsulation header; ``size``: the message's bytes, for the error line)."""
    frame_id, at = _string(body, 8, order)
    source, at = _string(body, at, order)
    at = (at + 3) & -4
    if at + 4 > len(body):
        raise ValueError(f"{size} bytes end before the agents' count")
    return frame_id, source, at + 4, int.from_bytes(body[at:at + 4], order)


def decode_agents(data: bytes) -> Agents | None:
    """A TrafficAgentArray's CDR bytes -> Agents; None for big-endian CDR or a big-endian host
    (then deserialize_message serves); ValueError for any other encapsulation or bytes that do
    not hold the agents they announce. Per agent (traffic_msgs.AgentEncoder's
    layout): uint32 id, uint8 kind, profile, state, pose at the next multiple of 8, 88 fixed
    bytes, string lane_id, uint16 owner, bool ghost, uint32 fault_id, float64 lateral_speed."""
    if data[:2] == BIG_ENDIAN or sys.byteorder != "little":
        return None
    if data[:2] != ENCAPSULATION[:2]:
        raise ValueError(f"encapsulation {bytes(data[:2]).hex()} is not XCDR1 (CDR)")
    stamp = header_stamp(data)
    if stamp is None:
        raise ValueError(f"{len(data)} bytes hold no header stamp")
    body = memoryview(data)[4:]
    frame_id, source, o, n = _head(body, len(data))
    words = body[:len(body) & -4].cast("I")
    starts = []
    for _ in range(n):  # the next agent's start depends on this one's lane name length
        starts.append(o)
        p = (o + 14) & -8  # the pose
        if p + 92 > len(body):
            raise ValueError(f"agent {len(starts)} of {n} past the end ({len(data)} bytes)")
        tail = 92 + words[(p + 88) >> 2]  # after lane_id (its length has the NUL)
        tail = ((tail + (tail & 1) + 6) & -4) + 4  # owner, ghost, fault_id
        o = p + ((tail + 7) & -8) + 8  # lateral_speed
    if o > len(body):
        raise ValueError(f"TrafficAgentArray of {n} agents needs {o + 4} bytes, has {len(data)}")
    buf = np.frombuffer(data, dtype=np.uint8)[4:]
    start = np.array(starts, dtype=np.int64)
    pose = (start + 14) & -8
    owner = pose + 92 + _gather(buf, pose + 88, "<u4")
    owner += owner & 1  # uint16 owner, bool ghost, then uint32 fault_id, float64 lateral_speed
    fault = (owner + 3 + 3) & -4
    lateral = (fault + 4 + 7) & -8
    rows = np.zeros(n, dtype=AGENT)
    rows["id"] = _gather(buf, start, "<u4")
    rows["kind"] = buf[start + 4]
    rows["ghost"] = buf[owner + 2] != 0
    block = _gather(buf, pose, _AGENT_BLOCK)
    for name in _AGENT_BLOCK.names:
        rows[name] = block[name]
    rows["lateral_speed"] = _gather(buf, lateral, "<f8")
    rows["owner"] = _gather(buf, owner, "<u2")
    rows["fault_id"] = _gather(buf, fault, "<u4")
    return Agents(*stamp, frame_id, rows, source)


def _gather(buf: np.ndarray, offsets: np.ndarray, dtype) -> np.ndarray:
    """One ``dtype`` value from ``buf`` at each offset."""
    dtype = np.dtype(dtype)
    return buf[offsets[:, None] + np.arange(dtype.itemsize)].view(dtype).reshape(len(offsets))


def yaws(rows: np.ndarray) -> np.ndarray:
    """Each row's yaw [rad] from its pose quaternion, bit for bit as
    conversions.rpy_from_quaternion gives it of the message."""
    q = rows["pose"]
    return yaw_from_xyzw_array(q[:, 3], q[:, 4], q[:, 5], q[:, 6])


def rows_of(msg: TrafficAgentArray) -> Agents:
    """The Agents of a deserialised message (big-endian bytes: decode_agents gave None)."""
    rows = np.zeros(len(msg.agents), dtype=AGENT)
    for row, a in zip(rows, msg.agents, strict=True):
        p, q = a.pose.position, a.pose.orientation
        row["id"], row["kind"], row["ghost"] = a.id, a.kind, a.ghost
        row["pose"] = (p.x, p.y, p.z, q.x, q.y, q.z, q.w)
        row["speed"], row["yaw_rate"], row["acceleration"] = a.speed, a.yaw_rate, a.acceleration
        row["length"], row["width"], row["lateral_speed"] = a.length, a.width, a.lateral_speed
        row["owner"], row["fault_id"] = a.owner, a.fault_id
    return Agents(msg.header.stamp.sec, msg.header.stamp.nanosec, msg.header.frame_id, rows,
                  msg.source)


def read_agents(data: bytes) -> Agents:
    """The agents of a TrafficAgentArray's bytes, either byte order; ValueError if they do not
    hold the agents they announce (a damaged or hostile message)."""
    agents = decode_agents(data)
    if agents is not None:
        return agents
    from rclpy.serialization import deserialize_message
    try:
        return rows_of(deserialize_message(data, TrafficAgentArray))
    except Exception as exc:  # (rclpy raises its own error kinds for bad bytes)
        raise ValueError(f"not a TrafficAgentArray ({exc})") from None


def agents_of(node, data: bytes, topic: str = "traffic/agents") -> Agents | None:
    """read_agents for a node's callback: None after one line (throttled) naming the problem,
    so a damaged or hostile array costs that array only."""
    try:
        return read_agents(data)
    except ValueError as exc:
        node.get_logger().warning(f"{topic}: {exc}", throttle_duration_sec=5.0)
        return None
