"""The ground truth's objects as CDR bytes (issue 14): the traffic node's TrafficAgentArray read
straight from its bytes into numpy rows (``agent_cdr.decode_agents``), and autoware_perception_msgs
PredictedObjects / TrackedObjects of those rows packed with numpy (``ObjectsEncoder``) into what
rmw_fastrtps takes from ``Publisher.publish(bytes)``: XCDR1 little endian after the 4-byte
encapsulation header, alignment counted from the byte after it (as state_cdr, traffic_msgs).

The builders of ground_truth_msgs stay the law (in_range, predicted_objects, tracked_objects,
ctrv_path, the same formulas in the same order, so the floats are the same bits): this is the
ground-truth node's fast path, pinned byte for byte (but the padding) to ``serialize_message``
of the builders' messages by test/ros/test_ground_truth_cdr.py. sin and cos are numpy's (libm's
bits on this build, numpy 2.4 x86-64: the test would tell otherwise), atan2 and hypot math's
(numpy's differ in the last bit). 70 agents: ~0.17 ms for both messages from the agents' bytes,
against ~10 ms to deserialise, build and serialise them (timeit, one core, load 0.6).

Why one object layout serves all: a PredictedObject / TrackedObject with one classification,
an empty footprint and (Predicted) zero or one path of a fixed pose count has a constant size
that is a multiple of 8, and from its start o every offset is fixed once o is 8-aligned (its
first float64, the pose, at o + 32). Objects start after the header's uint32 sequence length,
so only the first may start at 4 mod 8: it then has 4 bytes of padding before its pose, and
ends 8-aligned, so the others follow it aligned. Layouts (offsets [bytes] from o):
UUID 0, existence 16, classification count 20, label 24, probability 28, pose 32 (7 float64),
its covariance 88, twist 376 (6), covariance 424, acceleration 712 (6), covariance 760, then
Predicted: path count 1048, [pose count 1052, poses 1056 (56 each), Duration, confidence],
Shape (type, footprint count, dimensions at the next multiple of 8); Tracked: 1048
orientation_availability, is_stationary, Shape type 1050, footprint count 1052, dimensions 1056.
"""
from __future__ import annotations

import math

import numpy as np
from autoware_perception_msgs.msg import Shape, TrackedObjectKinematics

from vehicle_sim.nodes import conversions as conv
from vehicle_sim.nodes import ground_truth_msgs as gt
from vehicle_sim.nodes.agent_cdr import Agents, yaws
from vehicle_sim.nodes.state_cdr import ENCAPSULATION
from vehicle_sim.nodes.traffic_msgs import STOPPED_BELOW_MPS

HALF_HEIGHT = 0.5  # box centre z = HALF_HEIGHT * box height (ground_truth_msgs._centre)

# Autoware label and box height [m] per TrafficAgent.kind (uint8), as KIND_LABEL_HEIGHT
LABEL = np.full(256, gt.UNKNOWN_KIND[0], dtype=np.uint8)
HEIGHT_M = np.full(256, gt.UNKNOWN_KIND[1])
for _kind, (_label, _height) in gt.KIND_LABEL_HEIGHT.items():
    LABEL[_kind], HEIGHT_M[_kind] = _label, _height


def in_range(rows: np.ndarray, ego_xy: tuple[float, float] | None, range_m: float) -> np.ndarray:
    """The rows ground_truth_msgs.in_range keeps: no ghosts, within range_m [m] of the ego
    (all when range_m is 0 or no ego is known yet). Distances near range_m are math.hypot's."""
    rows = rows[~rows["ghost"]]
    if range_m <= 0.0 or ego_xy is None:
        return rows
    dx, dy = rows["pose"][:, 0] - ego_xy[0], rows["pose"][:, 1] - ego_xy[1]
    d = np.hypot(dx, dy)
    near = np.flatnonzero(np.abs(d - range_m) <= 1e-9 * range_m)
    d[near] = list(map(math.hypot, dx[near].tolist(), dy[near].tolist()))
    return rows[d <= range_m]


def _object_fields(tail: list[tuple], tail_at: int) -> list[tuple]:
    """The fields of one object from its start (8-aligned), common part then ``tail``."""
    return [("id", ">u4", 12), ("existence", "<f4", 16), ("classes", "<u4", 20),
            ("label", "u1", 24), ("probability", "<f4", 28), ("pose", "<f8", 32, 7),
            ("twist", "<f8", 376, 6), ("accel", "<f8", 712, 6),
            *[(name, code, tail_at + at, *count) for name, code, at, *count in tail]]


def _dtype(fields: list[tuple], size: int) -> np.dtype:
    return np.dtype({"names": [f[0] for f in fields],
                     "formats": [(f[1], f[3]) if len(f) > 3 else f[1] for f in fields],
                     "offsets": [f[2] for f in fields], "itemsize": size})


class ObjectsEncoder:
    """PredictedObjects (path of ``horizon_s`` [s] in ``step_s`` [s] steps, none at horizon 0)
    and TrackedObjects in ``frame_id`` of decode_agents' rows, equal to
    ground_truth_msgs.predicted_objects / tracked_objects of the same agents."""

    def __init__(self, frame_id: str, horizon_s: float, step_s: float):
        frame = frame_id.encode() + b"\0"
        self.head = (len(frame).to_bytes(4, "little") + frame + bytes(-len(frame) % 4))
        self.first_pad = (8 + len(self.head) + 4) % 8  # 4: the first object's pose padding
        self.step_s = step_s
        self.steps = gt.path_steps(horizon_s, step_s) if horizon_s > 0.0 else 0
        shape_at = 1052 + (16 + 56 * self.steps if self.steps else 0)  # Shape type
        path = [("paths", "<u4", 0), ("poses", "<u4", 4), ("path", "<f8", 8, (self.steps, 7)),
                ("step_sec", "<i4", 8 + 56 * self.steps), ("step_ns", "<u4", 12 + 56 * self.steps),
                ("confidence", "<f4", 16 + 56 * self.steps)] if self.steps else [
                ("paths", "<u4", 0)]
        shape = [("shape", "u1", shape_at - 1048), ("dims", "<f8", shape_at - 1048 + 12, 3)]
        self.predicted = _dtype(_object_fields(path + shape, 1048), shape_at + 36)
        self.tracked = _dtype(_object_fields(
            [("availability", "u1", 0), ("stationary", "?", 1), ("shape", "u1", 2),
             ("dims", "<f8", 8, 3)], 1048), 1080)
        self.predicted_row = self._template(self.predicted)
        if self.steps:
            duration = gt.path_time_step(step_s)
            self.predicted_row[["paths", "poses", "step_sec", "step_ns", "confidence"]] = (
                1, self.steps, duration.sec, duration.nanosec, 1.0)
        self.tracked_row = self._template(self.tracked)
        self.tracked_row["availability"] = TrackedObjectKinematics.AVAILABLE

    @staticmethod
    def _template(dtype: np.dtype) -> np.ndarray:
        row = np.zeros((), dtype=dtype)
        row[["existence", "classes", "probability", "shape"]] = (1.0, 1, 1.0, Shape.BOUNDING_BOX)
        return row

    def _common(self, out: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """id, label, pose (box centre), twist, acceleration, dimensions; the heights [m]."""
        height = HEIGHT_M[rows["kind"]]
        out["id"], out["label"] = rows["id"], LABEL[rows["kind"]]
        out["pose"] = rows["pose"]
        out["pose"][:, 2] = HALF_HEIGHT * height
        out["twist"][:, 0], out["twist"][:, 1] = rows["speed"], rows["lateral_speed"]
        out["twist"][:, 5] = rows["yaw_rate"]
        out["accel"][:, 0] = rows["acceleration"]
        out["dims"] = np.column_stack((rows["length"], rows["width"], height))
        return height

    def _message(self, sec: int, nanosec: int, objects: np.ndarray) -> bytes:
        stamp = sec.to_bytes(4, "little", signed=True) + nanosec.to_bytes(4, "little")
        count = len(objects).to_bytes(4, "little")
        raw = objects.view(np.uint8)
        if not len(objects) or not self.first_pad:
            return b"".join((ENCAPSULATION, stamp, self.head, count, raw))
        return b"".join((ENCAPSULATION, stamp, self.head, count, raw[:32], bytes(4), raw[32:]))

    def predicted_objects(self, agents: Agents, rows: np.ndarray) -> bytes:
        out = np.repeat(self.predicted_row, len(rows))
        height = self._common(out, rows)
        if self.steps:
            self._ctrv(out["path"], rows, height)
        return self._message(agents.sec, agents.nanosec, out)

    def _ctrv(self, path: np.ndarray, rows: np.ndarray, height: np.ndarray) -> None:
        """ground_truth_msgs.ctrv_path of every row into ``path`` (n, steps, 7)."""
        yaw0 = yaws(rows)[:, None]
        x, y = rows["pose"][:, :1], rows["pose"][:, 1:2]
        u, r = rows["speed"][:, None], rows["yaw_rate"][:, None]
        t = np.arange(self.steps) * self.step_s  # [s]
        yaw = yaw0 + r * t
        sin0, cos0 = np.sin(yaw0), np.cos(yaw0)
        path[:, :, 0], path[:, :, 1] = x + u * t * cos0, y + u * t * sin0  # straight
        turn = ~(np.abs(r[:, 0]) < 1e-6)  # ctrv_path's test (a NaN yaw rate turns)
        if turn.any():
            k = u[turn] / r[turn]  # [m]
            path[turn, :, 0] = x[turn] + k * (np.sin(yaw[turn]) - sin0[turn])
            path[turn, :, 1] = y[turn] + k * (cos0[turn] - np.cos(yaw[turn]))
        path[:, :, 2] = HALF_HEIGHT * height[:, None]
        path[:, :, 5], path[:, :, 6] = conv.yaw_zw(yaw)

    def tracked_objects(self, agents: Agents, rows: np.ndarray) -> bytes:
        out = np.repeat(self.tracked_row, len(rows))
        self._common(out, rows)
        out["stationary"] = np.abs(rows["speed"]) < STOPPED_BELOW_MPS
        return self._message(agents.sec, agents.nanosec, out)
