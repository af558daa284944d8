"""Ground truth in Autoware's perception types (autoware_perception_msgs), from the traffic
node's TrafficAgentArray / TrafficLightArray. Imported only where that package is installed
(the ground-truth node switches the interface off otherwise).

Objects (PredictedObjects / TrackedObjects, Autoware's conventions): pose = box centre in the
map frame (the agent's x, y and yaw; z = half the box height), twist and acceleration in the
object's own axes (x forward, y left: speed, lateral speed, yaw rate, longitudinal
acceleration), covariances zero (ground truth), existence probability 1, one classification
with probability 1 from the agent kind, shape a BOUNDING_BOX (length, width, height).
object_id: the agent's TrafficAgent.id as a 128-bit big-endian number (stable across shard
hand-over). Predicted path: one path at constant speed and yaw rate (CTRV) over
``horizon_s`` in ``step_s`` steps, confidence 1.

Lights: one TrafficLightGroup per lit vehicle light; its id is the Lanelet2 regulatory element
id of the export (export.lanelet2_osm.light_group_id); one CIRCLE element, SOLID_ON in its
colour (GREEN, AMBER, RED), confidence 1. A dark light (STATE_DARK: outside the control zone,
where the traffic does not run it) is left out, as a perception stack leaves out a light it
has not seen: Autoware versions differ on an UNKNOWN colour (a stop in some, a pass in others),
while a light never received is a pass in all, and one that stops coming is a stop once older
than tl_state_timeout. Pedestrian lights are not sent (no crosswalk elements in the export yet).
"""
from __future__ import annotations

import math

from autoware_perception_msgs.msg import (
    ObjectClassification,
    PredictedObject,
    PredictedObjects,
    PredictedPath,
    Shape,
    TrackedObject,
    TrackedObjectKinematics,
    TrackedObjects,
    TrafficLightElement,
    TrafficLightGroup,
    TrafficLightGroupArray,
)
from builtin_interfaces.msg import Duration
from geometry_msgs.msg import Pose
from unique_identifier_msgs.msg import UUID

from vehicle_sim.msg import TrafficAgent, TrafficLight, TrafficLightArray
from vehicle_sim.nodes import conversions as conv
from vehicle_sim.nodes.traffic_msgs import STOPPED_BELOW_MPS

# Autoware label and box height [m] per TrafficAgent.kind. Heights are a choice: typical
# vehicle heights (sedan 1.5 m, box truck 3.5 m, city bus 3.2 m, van 2.2 m).
KIND_LABEL_HEIGHT = {
    TrafficAgent.KIND_CAR: (ObjectClassification.CAR, 1.5),
    TrafficAgent.KIND_TRUCK: (ObjectClassification.TRUCK, 3.5),
    TrafficAgent.KIND_BUS: (ObjectClassification.BUS, 3.2),
    TrafficAgent.KIND_VAN: (ObjectClassification.CAR, 2.2),  # Autoware has no van label
}
UNKNOWN_KIND = (ObjectClassification.UNKNOWN, 1.5)
LIGHT_COLOUR = {TrafficLight.STATE_GREEN: TrafficLightElement.GREEN,
                TrafficLight.STATE_YELLOW: TrafficLightElement.AMBER,
                TrafficLight.STATE_RED: TrafficLightElement.RED}


def object_uuid(agent_id: int) -> UUID:
    return UUID(uuid=list(int(agent_id).to_bytes(16, "big")))


def in_range(agents: list[TrafficAgent], ego_xy: tuple[float, float] | None,
             range_m: float) -> list[TrafficAgent]:
    """The agents owned by this message (no ghosts) within ``range_m`` of the ego (all when
    range_m is 0 or no ego is known yet)."""
    out = [a for a in agents if not a.ghost]
    if range_m <= 0.0 or ego_xy is None:
        return out
    ex, ey = ego_xy
    return [a for a in out if math.hypot(a.pose.position.x - ex, a.pose.position.y - ey)
            <= range_m]


def _fill_common(obj, a: TrafficAgent) -> float:
    """object_id, existence, classification and shape; returns the box height [m]."""
    label, height = KIND_LABEL_HEIGHT.get(a.kind, UNKNOWN_KIND)
    obj.object_id = object_uuid(a.id)
    obj.existence_probability = 1.0
    obj.classification = [ObjectClassification(label=label, probability=1.0)]
    obj.shape.type = Shape.BOUNDING_BOX
    obj.shape.dimensions.x, obj.shape.dimensions.y = float(a.length), float(a.width)
    obj.shape.dimensions.z = height
    return height


def _centre(a: TrafficAgent, height: float) -> Pose:
    pose = Pose(orientation=a.pose.orientation)
    pose.position.x, pose.position.y, pose.position.z = a.pose.position.x, a.pose.position.y, \
        0.5 * height
    return pose


def _kinematics(k, a: TrafficAgent, height: float, pose_f: str, twist_f: str,
                accel_f: str) -> None:
    getattr(k, pose_f).pose = _centre(a, height)
    twist = getattr(k, twist_f).twist
    twist.linear.x, twist.linear.y, twist.angular.z = a.speed, a.lateral_speed, a.yaw_rate
    getattr(k, accel_f).accel.linear.x = a.acceleration


def path_steps(horizon_s: float, step_s: float) -> int:
    """Poses in a predicted path over horizon_s [s] in step_s [s] steps (the current one too)."""
    return int(round(horizon_s / step_s)) + 1


def path_time_step(step_s: float) -> Duration:
    """A predicted path's time_step of step_s [s] (conversions.duration: to the nanosecond)."""
    return conv.duration(step_s)


def ctrv_path(a: TrafficAgent, height: float, horizon_s: float, step_s: float) -> PredictedPath:
    """Constant speed and yaw rate from the agent's pose: poses at step_s, 2 step_s, ...
    up to horizon_s (the current pose first)."""
    path = PredictedPath(confidence=1.0)
    path.time_step = path_time_step(step_s)
    q = a.pose.orientation  # the traffic node's: unit
    yaw0 = conv.yaw_from_xyzw(q.x, q.y, q.z, q.w)
    x, y, u, r = a.pose.position.x, a.pose.position.y, a.speed, a.yaw_rate
    for k in range(path_steps(horizon_s, step_s)):
        t = k * step_s
        yaw = yaw0 + r * t
        if abs(r) < 1e-6:
            px, py = x + u * t * math.cos(yaw0), y + u * t * math.sin(yaw0)
        else:
            px = x + u / r * (math.sin(yaw) - math.sin(yaw0))
            py = y + u / r * (math.cos(yaw0) - math.cos(yaw))
        pose = Pose()
        pose.position.x, pose.position.y, pose.position.z = px, py, 0.5 * height
        pose.orientation.z, pose.orientation.w = conv.yaw_xyzw(yaw)[2:]
        path.path.append(pose)
    return path


def predicted_objects(agents: list[TrafficAgent], header, horizon_s: float,
                      step_s: float) -> PredictedObjects:
    out = PredictedObjects(header=header)
    for a in agents:
        obj = PredictedObject()
        height = _fill_common(obj, a)
        k = obj.kinematics
        _kinematics(k, a, height, "initial_pose_with_covariance",
                    "initial_twist_with_covariance", "initial_acceleration_with_covariance")
        if horizon_s > 0.0:
            k.predicted_paths = [ctrv_path(a, height, horizon_s, step_s)]
        out.objects.append(obj)
    return out


def tracked_objects(agents: list[TrafficAgent], header) -> TrackedObjects:
    out = TrackedObjects(header=header)
    for a in agents:
        obj = TrackedObject()
        height = _fill_common(obj, a)
        k = obj.kinematics
        _kinematics(k, a, height, "pose_with_covariance", "twist_with_covariance",
                    "acceleration_with_covariance")
        k.orientation_availability = TrackedObjectKinematics.AVAILABLE
        k.is_stationary = abs(a.speed) < STOPPED_BELOW_MPS
        out.objects.append(obj)
    return out


def light_groups(msg: TrafficLightArray, group_ids: dict[str, int]) -> tuple[
        TrafficLightGroupArray, list[str]]:
    """(groups of the lit vehicle lights, names not in ``group_ids``: light name -> group
    id)."""
    out = TrafficLightGroupArray(stamp=msg.header.stamp)
    unknown = []
    for light in msg.lights:
        if light.pedestrian:
            continue
        gid = group_ids.get(light.id)
        if gid is None:
            unknown.append(light.id)
            continue
        colour = LIGHT_COLOUR.get(light.state)
        if colour is None:  # dark (module docstring)
            continue
        element = TrafficLightElement(color=colour, shape=TrafficLightElement.CIRCLE,
                                      status=TrafficLightElement.SOLID_ON, confidence=1.0)
        out.traffic_light_groups.append(TrafficLightGroup(traffic_light_group_id=gid,
                                                          elements=[element]))
    return out, unknown
