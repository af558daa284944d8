"""A recording (MCAP with ros2msg schemas and CDR messages) as numpy arrays, without ROS.

Decoded with mcap_ros2 (the schemas embedded in the file), so a recording made by another build
of vehicle_sim still reads. Times are the messages' header stamps [s] of simulation time.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from operator import attrgetter
from pathlib import Path

import numpy as np
from mcap.reader import make_reader
from mcap_ros2.decoder import DecoderFactory

from vehicle_sim.core.rotations import yaw_from_xyzw

TOPICS = ("/vehicle/state", "/vehicle/control", "/bridge/active_source", "/sim/status",
          "/traffic/agents", "/traffic/lights", "/accidents", "/imu/data", "/gnss/fix")
# a decoded quaternion's (x, y, z, w), for yaw_from_xyzw: the nodes' yaw, to the bit
_XYZW = attrgetter("x", "y", "z", "w")


def _t(stamp) -> float:
    return stamp.sec + stamp.nanosec * 1e-9


@dataclass
class Recording:
    """Columns per topic; every array is float64, one row per message."""
    path: Path
    map_file: str = ""
    vehicle_file: str = ""  # the ego's (metadata of recordings since vehicle_file was written)
    # t, x, y, yaw, vx, vy, yaw_rate, ax, ay (base_link accelerations, gravity excluded)
    state: np.ndarray = field(default_factory=lambda: np.zeros((0, 9)))
    control: np.ndarray = field(default_factory=lambda: np.zeros((0, 4)))  # t, steer, thr, brk
    sources: list[tuple[float, str]] = field(default_factory=list)  # (log time, source)
    # t, rtf, lateness p50, p99, max
    status: np.ndarray = field(default_factory=lambda: np.zeros((0, 5)))
    # per snapshot: (t, agents (n, 7): id, x, y, yaw, speed, length, width)
    agents: list[tuple[float, np.ndarray]] = field(default_factory=list)
    # per snapshot: (t, {light id: (state, x, y)})
    lights: list[tuple[float, dict[str, tuple[int, float, float]]]] = field(default_factory=list)
    accidents: list[dict] = field(default_factory=list)
    imu: np.ndarray = field(default_factory=lambda: np.zeros((0, 7)))  # t, ax, ay, az, gx, gy, gz
    gnss: np.ndarray = field(default_factory=lambda: np.zeros((0, 4)))  # t, lat, lon, alt

    @property
    def duration_s(self) -> float:
        return float(self.state[-1, 0] - self.state[0, 0]) if len(self.state) > 1 else 0.0


PARTS = ("front", "rear", "left side", "right side", "unknown")


def _accident(m) -> dict:
    return {"time_s": _t(m.header.stamp), "id": int(m.id), "actor": m.actor, "victim": m.victim,
            "actor_part": PARTS[min(m.actor_part, 4)], "victim_part": PARTS[min(m.victim_part, 4)],
            "impact_speed_mps": float(m.impact_speed),
            "position_m": [float(m.position.x), float(m.position.y)],
            "scripted": bool(m.source == 1)}


def read_recording(path: str | Path) -> Recording:
    """Read ``path``; raises ValueError naming the file when it is not a readable MCAP."""
    path = Path(path)
    rec = Recording(path)
    rows: dict[str, list] = {t: [] for t in TOPICS}
    try:
        with open(path, "rb") as f:
            reader = make_reader(f, decoder_factories=[DecoderFactory()])
            for record in reader.iter_metadata():
                if record.name == "vehicle_sim":
                    rec.map_file = record.metadata.get("map_file", "")
                    rec.vehicle_file = record.metadata.get("vehicle_file", "")
            for _, channel, message, m in reader.iter_decoded_messages(topics=list(TOPICS)):
                _take(rec, rows, channel.topic, message.log_time, m)
    except (OSError, ValueError, KeyError, EOFError) as exc:
        raise ValueError(f"{path}: not a readable vehicle_sim recording ({exc})") from None
    except Exception as exc:  # the mcap readers raise their own types on a damaged file
        raise ValueError(f"{path}: not a readable MCAP file ({type(exc).__name__}: {exc})") \
            from None
    for topic, name, width in (("/vehicle/state", "state", 9), ("/vehicle/control", "control", 4),
                               ("/sim/status", "status", 5), ("/imu/data", "imu", 7),
                               ("/gnss/fix", "gnss", 4)):
        if rows[topic]:
            data = np.array(rows[topic], dtype=np.float64).reshape(-1, width)
            setattr(rec, name, data[np.argsort(data[:, 0], kind="stable")])
    return rec


def _take(rec: Recording, rows: dict[str, list], topic: str, log_ns: int, m) -> None:
    if topic == "/vehicle/state":
        a = m.linear_acceleration
        rows[topic].append((_t(m.header.stamp), m.pose.position.x, m.pose.position.y,
                            yaw_from_xyzw(*_XYZW(m.pose.orientation)), m.twist.linear.x,
                            m.twist.linear.y, m.twist.angular.z, a.x, a.y))
    elif topic == "/vehicle/control":
        rows[topic].append((_t(m.header.stamp), m.steering_angle, m.throttle, m.brake))
    elif topic == "/bridge/active_source":
        rec.sources.append((log_ns * 1e-9, m.data))
    elif topic == "/sim/status":
        rows[topic].append((m.sim_time, m.real_time_factor, m.lateness_p50, m.lateness_p99,
                            m.lateness_max))
    elif topic == "/traffic/agents":
        agents = np.array([(a.id, a.pose.position.x, a.pose.position.y,
                            yaw_from_xyzw(*_XYZW(a.pose.orientation)), a.speed, a.length,
                            a.width) for a in m.agents if not a.ghost],
                          dtype=np.float64).reshape(-1, 7)
        rec.agents.append((_t(m.header.stamp), agents))
    elif topic == "/traffic/lights":
        rec.lights.append((_t(m.header.stamp), {lt.id: (int(lt.state), lt.position.x,
                                                          lt.position.y)
                                                 for lt in m.lights if not lt.pedestrian}))
    elif topic == "/accidents":
        rec.accidents.append(_accident(m))
    elif topic == "/imu/data":
        a, g = m.linear_acceleration, m.angular_velocity
        rows[topic].append((_t(m.header.stamp), a.x, a.y, a.z, g.x, g.y, g.z))
    elif topic == "/gnss/fix":
        rows[topic].append((_t(m.header.stamp), m.latitude, m.longitude, m.altitude))
