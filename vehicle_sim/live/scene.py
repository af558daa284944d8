"""ROS messages of the graph -> Foxglove scene messages (pure: no server, no rclpy calls).

Ego and agents are cubes of their bounding box at their pose, lights spheres at their stop lines
coloured by state, the map's markers (map/markers: lane lines, objects, signs) line strips,
cylinders and spheres; the frame is the graph's ``map`` (identity to odom).
"""
from __future__ import annotations

from foxglove.messages import (
    Color,
    CubePrimitive,
    CylinderPrimitive,
    LinePrimitive,
    LinePrimitiveLineType,
    Point3,
    Pose,
    Quaternion,
    SceneEntity,
    SceneUpdate,
    SpherePrimitive,
    Timestamp,
    Vector3,
)

from vehicle_sim.core.rotations import yaw_from_xyzw, yaw_xyzw
from vehicle_sim.core.traffic.light_states import DARK, GREEN, RED, YELLOW

FRAME = "map"
BOX_HEIGHT_M = 1.5  # [m] the ego's and the agents' boxes (a choice: messages carry no height)
LIGHT_RGB = {DARK: (0.3, 0.3, 0.3), GREEN: (0.0, 0.9, 0.0), YELLOW: (1.0, 0.8, 0.0),
             RED: (0.9, 0.0, 0.0)}  # by light state
MARKER_CUBE, MARKER_SPHERE, MARKER_CYLINDER, MARKER_LINE_STRIP, MARKER_SPHERE_LIST = 1, 2, 3, 4, 7


def stamp(msg_stamp) -> Timestamp:
    return Timestamp(msg_stamp.sec, msg_stamp.nanosec)


def _pose(x: float, y: float, z: float, yaw: float) -> Pose:
    qx, qy, qz, qw = yaw_xyzw(yaw)
    return Pose(position=Vector3(x=x, y=y, z=z), orientation=Quaternion(x=qx, y=qy, z=qz, w=qw))


def _yaw(q) -> float:
    """Yaw [rad] of a graph message's (unit) quaternion."""
    return yaw_from_xyzw(q.x, q.y, q.z, q.w)


def ego_scene(state, length_m: float, width_m: float) -> SceneUpdate:
    """The ego as a blue box of length_m x width_m [m] (its vehicle file's chassis) at its pose
    (vehicle_sim/VehicleState)."""
    p = state.pose.position
    cube = CubePrimitive(pose=_pose(p.x, p.y, 0.5 * BOX_HEIGHT_M, _yaw(state.pose.orientation)),
                         size=Vector3(x=length_m, y=width_m, z=BOX_HEIGHT_M),
                         color=Color(r=0.1, g=0.4, b=1.0, a=1.0))
    return SceneUpdate(entities=[SceneEntity(timestamp=stamp(state.header.stamp), frame_id=FRAME,
                                             id="ego", cubes=[cube])])


def agents_scene(array) -> SceneUpdate:
    """Every agent of one traffic array as a box (grey and translucent for a shard's ghost)."""
    cubes = [CubePrimitive(pose=_pose(a.pose.position.x, a.pose.position.y, 0.5 * BOX_HEIGHT_M,
                                      _yaw(a.pose.orientation)),
                           size=Vector3(x=a.length, y=a.width, z=BOX_HEIGHT_M),
                           color=Color(r=0.6, g=0.6, b=0.6, a=0.4) if a.ghost else
                           Color(r=0.9, g=0.3, b=0.1, a=1.0))
             for a in array.agents]
    return SceneUpdate(entities=[SceneEntity(timestamp=stamp(array.header.stamp), frame_id=FRAME,
                                             id=f"agents/{array.source}", cubes=cubes)])


def lights_scene(array) -> SceneUpdate:
    spheres = [SpherePrimitive(pose=_pose(lt.position.x, lt.position.y, 3.0, 0.0),
                               size=Vector3(x=1.0, y=1.0, z=1.0), color=_light(lt.state))
               for lt in array.lights]
    return SceneUpdate(entities=[SceneEntity(timestamp=stamp(array.header.stamp), frame_id=FRAME,
                                             id="lights", spheres=spheres)])


def _light(state: int) -> Color:
    r, g, b = LIGHT_RGB.get(state, LIGHT_RGB[DARK])
    return Color(r=r, g=g, b=b, a=1.0)


def _colour(c) -> Color:
    return Color(r=c.r, g=c.g, b=c.b, a=c.a)


def map_scene(markers) -> SceneUpdate:
    """visualization_msgs/MarkerArray of map/markers -> one entity per marker namespace."""
    by_ns: dict[str, dict[str, list]] = {}
    for m in markers.markers:
        e = by_ns.setdefault(m.ns, {"lines": [], "cylinders": [], "spheres": []})
        p = m.pose.position
        if m.type == MARKER_LINE_STRIP:
            e["lines"].append(LinePrimitive(
                type=LinePrimitiveLineType.LineStrip, pose=_pose(p.x, p.y, p.z, 0.0),
                thickness=m.scale.x, points=[Point3(x=q.x, y=q.y, z=q.z) for q in m.points],
                color=_colour(m.color)))
        elif m.type == MARKER_CYLINDER:
            e["cylinders"].append(CylinderPrimitive(
                pose=_pose(p.x, p.y, p.z, 0.0), bottom_scale=1.0, top_scale=1.0,
                size=Vector3(x=m.scale.x, y=m.scale.y, z=m.scale.z), color=_colour(m.color)))
        elif m.type == MARKER_SPHERE_LIST:
            e["spheres"] += [SpherePrimitive(pose=_pose(q.x, q.y, q.z, 0.0),
                                             size=Vector3(x=m.scale.x, y=m.scale.y, z=m.scale.z),
                                             color=_colour(m.color)) for q in m.points]
    return SceneUpdate(entities=[SceneEntity(frame_id=FRAME, id=f"map/{ns}", **parts)
                                 for ns, parts in by_ns.items()])
