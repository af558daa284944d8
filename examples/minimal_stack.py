#!/usr/bin/env python3
"""A minimal external autonomy stack for vehicle_sim, built only on standard interfaces.

It imports no vehicle_sim module: rclpy, nav_msgs, ackermann_msgs, autoware_perception_msgs,
lanelet2 and numpy. What it does:
- loads the Lanelet2 export of the simulator's map (``vehicle_sim_export_map``; same origin);
- routes with lanelet2.routing from the lanelet under the ego's first pose (``odom``) to the
  lanelet under ``--goal x,y`` (map frame; default: around the first block of the urban grid);
- follows the route's centreline with pure pursuit (look-ahead 5 m + 0.5 s * v, a common
  choice for urban speeds) and commands speed and road-wheel angle as
  ackermann_msgs/AckermannDriveStamped on ``ackermann_cmd`` (frame base_link, stamped with the
  latest odometry stamp, i.e. simulation time);
- stops before the stop line of a traffic_light regulatory element on its route while that
  light group (TrafficLightGroupArray, group id = regulatory element id) is red, or amber when
  it can still stop at a comfortable deceleration;
- slows for a PredictedObject ahead in its lane (gap rule below);
- yields at junctions (lanelets with Autoware's ``turn_direction``): it holds before entering
  while a moving object crossing its path there is predicted (constant velocity) to be in it
  between now and CRITICAL_GAP_S after the ego reaches the hold point (gap acceptance).

It knows no lockstep protocol: with ``use_sim_time`` it computes a command for every 50 ms of
simulation time of odometry it receives, and the bridge forwards stack commands as they arrive;
in a lockstep run the bridge holds the simulation until such a command has come (at most its
``stack_lag_s`` of sim time after the previous one), so a slow machine slows the run, not the
stack's reactions.
Assumptions kept simple on purpose: map = odom (the simulator's default ``odom_in_map``; a stack
for an offset map -> odom would read it from /tf_static) and base_link at the CG (the default
``base_link:=cg``; FRONT_M below).

    python3 minimal_stack.py --map urban.osm [--origin LAT,LON,ALT] [--goal X,Y]
"""
from __future__ import annotations

import argparse
import math
import sys

import lanelet2
import numpy as np
import rclpy
from ackermann_msgs.msg import AckermannDriveStamped
from autoware_perception_msgs.msg import (
    PredictedObjects,
    TrafficLightElement,
    TrafficLightGroupArray,
)
from lanelet2.io import Origin
from lanelet2.projection import LocalCartesianProjector
from nav_msgs.msg import Odometry
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import QoSProfile, ReliabilityPolicy

PERIOD_NS = 50_000_000        # 20 Hz control in simulation time
WHEELBASE_M = 2.58            # a choice: a mid-size car (the stack does not read vehicle files)
MAX_STEER_RAD = 0.6
LAT_ACCEL_MPS2 = 2.0          # comfortable lateral acceleration in turns (a choice)
STOP_DECEL_MPS2 = 2.5         # planned braking to a stop line or a lead vehicle (a choice)
AMBER_DECEL_MPS2 = 4.0        # amber: stop only if this deceleration suffices, else go on
FRONT_M = 2.3                 # base_link (CG: run the sim with base_link:=cg) to the front
                              # bumper, plus a margin
STOP_MARGIN_M = 1.0           # front bumper this far before the stop line
GAP_MIN_M = 6.0               # standstill gap to a lead object (front to its rear)
TIME_GAP_S = 0.75             # gap rule: desired gap = GAP_MIN_M + TIME_GAP_S * v
LANE_HALF_M = 1.75
# junction yield (gap acceptance)
CRITICAL_GAP_S = 5.0          # accepted gap, permissive left turn at a signal: HCM 4.5 s,
                              # measured mean critical headway 4.87 s (Claros et al., TRR 2675
                              # (10), 2021: 2,500 turns; unsignalised, HCM 2010 Exh. 19-10: 4.1 s);
                              # rounded up: the ego needs ~2.5 s from rest to clear the lane
HORIZON_S = 7.0               # prediction horizon: CRITICAL_GAP_S plus ~2 s of approach
PREDICT_STEP_S = 0.25         # 3.5 m at 14 m/s (50 km/h): under the 5 m-wide zone (2 CONFLICT_M)
CONFLICT_M = 2.5              # object centre this close to the ego's path: the boxes may touch
                              # (two half widths ~0.9 m each, plus 0.7 m)
MOVING_MPS = 0.5              # slower objects are left to the gap rule: a car waiting in the
                              # junction must not hold the ego forever (two-way standstill)
CROSSING_RAD = math.radians(45.0)  # heading closer to the path's: a leader or follower (gap rule)
APPROACH_MPS = 2.0            # speed assumed for the ego's arrival time when slower (from rest)
COMMIT_M = 3.0                # front bumper this far into the junction: committed, clear it. A
                              # late hold overshoots (measured 1.6 m at 3.6 m/s, the stack's
                              # commands lagging on a loaded host) and must still hold short of
                              # the oncoming lane (~6 m into a 10.75 m-radius left turn)


def yaw_of(q) -> float:
    """Yaw [rad] of a geometry_msgs/Quaternion (rotation about z, REP-103)."""
    return math.atan2(2 * (q.w * q.z + q.x * q.y), 1 - 2 * (q.y * q.y + q.z * q.z))


def load_map(path: str, origin: tuple[float, float, float]):
    """The Lanelet2 map and its routing graph for vehicles (loaded once, at start)."""
    projector = LocalCartesianProjector(Origin(*origin))
    lmap, errors = lanelet2.io.loadRobust(path, projector)
    if errors:
        raise ValueError(f"{path}: {errors[0]}")
    rules = lanelet2.traffic_rules.create(lanelet2.traffic_rules.Locations.Germany,
                                          lanelet2.traffic_rules.Participants.Vehicle)
    return lmap, lanelet2.routing.RoutingGraph(lmap, rules)


def plan_route(lmap, graph, start_xy_yaw, goal_xy):
    """Centreline polyline (N x 2), its arc lengths, the stop lines [(s, light id)] and the
    junctions [(s_in, s_out)]: the route's lanelets with a ``turn_direction`` (connectors)."""
    x, y, yaw = start_xy_yaw

    def heading_error(ll, px, py) -> float:
        c = np.array([[p.x, p.y] for p in ll.centerline])
        i = int(np.argmin(np.hypot(c[:, 0] - px, c[:, 1] - py)))
        a, b = c[max(i - 1, 0)], c[min(i + 1, len(c) - 1)]
        d = math.atan2(b[1] - a[1], b[0] - a[0]) - yaw
        return abs(math.atan2(math.sin(d), math.cos(d)))

    def under(px, py, want_heading: bool):
        near = lanelet2.geometry.findNearest(lmap.laneletLayer, lanelet2.core.BasicPoint2d(px, py),
                                             6)
        inside = [ll for dist, ll in near if dist < 0.01]
        if want_heading:
            inside = [ll for ll in inside if heading_error(ll, px, py) < 0.5]
        if not inside:
            raise ValueError(f"no lanelet at ({px:.1f}, {py:.1f})")
        return inside[0]

    start, goal = under(x, y, True), under(*goal_xy, False)
    route = graph.getRoute(start, goal)
    if route is None:
        raise ValueError(f"no route from lanelet {start.id} to lanelet {goal.id}")
    points, stops, spans = [], [], []
    for ll in route.shortestPath():
        c = [(p.x, p.y) for p in ll.centerline]
        first = max(len(points) - 1, 0)
        points.extend(c[1:] if points else c)
        if "turn_direction" in ll.attributes:
            spans.append((first, len(points) - 1))
        for reg in ll.trafficLights():
            line = reg.stopLine
            if line is not None:
                stops.append(((line[0].x + line[-1].x) / 2, (line[0].y + line[-1].y) / 2,
                              reg.id))
    raw = np.array(points)
    s_raw = np.concatenate([[0.0], np.cumsum(np.hypot(*np.diff(raw, axis=0).T))])
    s = np.arange(0.0, s_raw[-1], 0.5)  # resampled every 0.5 m
    xy = np.column_stack([np.interp(s, s_raw, raw[:, 0]), np.interp(s, s_raw, raw[:, 1])])
    # the route ends at the goal point (its nearest point in the goal lanelet's last 150 m)
    tail = max(len(s) - 300, 0)
    end = tail + int(np.argmin(np.hypot(xy[tail:, 0] - goal_xy[0], xy[tail:, 1] - goal_xy[1])))
    xy, s = xy[:end + 1], s[:end + 1]
    stop_s = [(float(s[np.argmin(np.hypot(xy[:, 0] - sx, xy[:, 1] - sy))]), rid)
              for sx, sy, rid in stops
              if np.min(np.hypot(xy[:, 0] - sx, xy[:, 1] - sy)) < LANE_HALF_M]
    junctions = [(float(s_raw[a]), float(s_raw[b])) for a, b in spans if s_raw[a] < s[-1]]
    return xy, s, sorted(stop_s), junctions


class MinimalStack(Node):
    def __init__(self, args):
        super().__init__("minimal_stack",
                         parameter_overrides=[Parameter("use_sim_time", value=True)])
        self.args = args
        # the map and its routing graph before anything else: the first odometry only routes
        self.lmap, self.graph = load_map(args.map, args.origin)
        self.route = None
        self.i = 0                      # index of the route point nearest the ego
        self.last_ns = -PERIOD_NS
        self.lights: dict[int, int] = {}  # group id -> colour
        # one row per object: x, y, half length, yaw, speed at objects_s (its message's time)
        self.objects = np.zeros((0, 5))
        self.objects_s = 0.0
        self.now_s = 0.0                # simulation time of the odometry being used
        self.stopping_for = None
        self.yielding = False
        self.get_logger().info(f"map loaded: {args.map}")
        reliable = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
        # odometry and objects: the newest only. A stack starved of CPU then skips stale samples
        # instead of working through a queue of them (its commands would lag further)
        newest = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE)
        self.pub = self.create_publisher(AckermannDriveStamped, "ackermann_cmd", reliable)
        self.create_subscription(Odometry, "odom", self.on_odom, newest)
        self.create_subscription(PredictedObjects, args.objects_topic, self.on_objects, newest)
        self.create_subscription(TrafficLightGroupArray, args.lights_topic, self.on_lights,
                                 reliable)

    def on_lights(self, msg) -> None:
        for g in msg.traffic_light_groups:
            circles = [e.color for e in g.elements if e.shape == TrafficLightElement.CIRCLE]
            self.lights[g.traffic_light_group_id] = circles[0] if circles else 0

    def on_objects(self, msg) -> None:
        self.objects_s = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
        rows = []
        for o in msg.objects:
            pose = o.kinematics.initial_pose_with_covariance.pose
            yaw = yaw_of(pose.orientation)
            speed = o.kinematics.initial_twist_with_covariance.twist.linear.x  # object axes
            rows.append((pose.position.x, pose.position.y, o.shape.dimensions.x / 2, yaw, speed))
        self.objects = np.array(rows).reshape(-1, 5)

    def on_odom(self, msg) -> None:
        t_ns = msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec
        if t_ns - self.last_ns < PERIOD_NS:
            return
        self.last_ns = t_ns
        self.now_s = t_ns * 1e-9
        p, yaw = msg.pose.pose.position, yaw_of(msg.pose.pose.orientation)
        v = msg.twist.twist.linear.x
        if self.route is None:
            try:
                self.route = plan_route(self.lmap, self.graph, (p.x, p.y, yaw),
                                        self.args.goal)
            except (ValueError, RuntimeError) as exc:
                self.get_logger().error(f"minimal_stack: {exc}")
                raise SystemExit(2) from None
            xy, s, stops, junctions = self.route
            self.get_logger().info(f"route {s[-1]:.0f} m, lights at "
                                   f"{[(round(a), b) for a, b in stops]}, junctions at "
                                   f"{[round(a) for a, _ in junctions]}")
        speed, steer = self.control(p.x, p.y, yaw, v)
        cmd = AckermannDriveStamped()
        cmd.header.stamp, cmd.header.frame_id = msg.header.stamp, "base_link"
        cmd.drive.speed, cmd.drive.steering_angle = float(speed), float(steer)
        self.pub.publish(cmd)

    def control(self, x: float, y: float, yaw: float, v: float) -> tuple[float, float]:
        xy, s, _, _ = self.route
        window = slice(self.i, min(self.i + 200, len(xy)))
        self.i += int(np.argmin(np.hypot(xy[window, 0] - x, xy[window, 1] - y)))
        s_ego = s[self.i]
        # pure pursuit: the route point one look-ahead ahead, in base_link
        look_m = 5.0 + 0.5 * max(v, 0.0)
        j = min(int(np.searchsorted(s, s_ego + look_m)), len(xy) - 1)
        dx, dy = xy[j, 0] - x, xy[j, 1] - y
        alpha = math.atan2(dy, dx) - yaw
        dist = max(math.hypot(dx, dy), 1.0)
        steer = math.atan(2.0 * WHEELBASE_M * math.sin(alpha) / dist)
        steer = max(-MAX_STEER_RAD, min(MAX_STEER_RAD, steer))
        # speed: cruise, curvature ahead (3-point heading change over the next 20 m)
        speed = self.args.cruise
        k_end = min(int(np.searchsorted(s, s_ego + 20.0)), len(xy) - 2)
        if k_end > self.i + 1:
            seg = np.diff(xy[self.i:k_end + 2], axis=0)
            h = np.unwrap(np.arctan2(seg[:, 1], seg[:, 0]))
            kappa = np.abs(np.diff(h)) / np.maximum(np.hypot(*seg[1:].T), 1e-3)
            speed = min(speed, math.sqrt(LAT_ACCEL_MPS2 / max(float(kappa.max()), 1e-3)))
        speed = min(speed, self.brake_to(s[-1] - s_ego - FRONT_M))       # the goal
        speed = min(speed, self.light_limit(s_ego, v))
        speed = min(speed, self.gap_limit(x, y, s_ego, v))
        speed = min(speed, self.yield_limit(s_ego, v))
        return max(speed, 0.0), steer

    @staticmethod
    def brake_to(dist_m: float) -> float:
        """Speed from which STOP_DECEL_MPS2 stops within dist_m (0 at or past it)."""
        return math.sqrt(2.0 * STOP_DECEL_MPS2 * dist_m) if dist_m > 0.3 else 0.0

    def light_limit(self, s_ego: float, v: float) -> float:
        _, _, stops, _ = self.route
        for s_stop, rid in stops:
            d = s_stop - s_ego - FRONT_M - STOP_MARGIN_M
            if d < -STOP_MARGIN_M:
                continue  # behind the front bumper: passed
            colour = self.lights.get(rid, TrafficLightElement.UNKNOWN)
            must = colour == TrafficLightElement.RED or (
                colour == TrafficLightElement.AMBER and (self.stopping_for == rid
                                                        or v * v < 2 * AMBER_DECEL_MPS2 * d))
            if must and self.stopping_for != rid:
                self.get_logger().info(f"stopping for light {rid} ({d:.1f} m ahead)")
            self.stopping_for = rid if must else None
            return self.brake_to(d) if must else math.inf
        return math.inf

    def gap_limit(self, x: float, y: float, s_ego: float, v: float) -> float:
        xy, s, _, _ = self.route
        ahead = slice(self.i, min(int(np.searchsorted(s, s_ego + 60.0)) + 1, len(xy)))
        limit = math.inf
        for ox, oy, half, _, _ in self.objects:
            d = np.hypot(xy[ahead, 0] - ox, xy[ahead, 1] - oy)
            k = int(np.argmin(d))
            if d[k] > LANE_HALF_M or k == 0:
                continue  # not in the lane of the route ahead
            gap = s[self.i + k] - s_ego - FRONT_M - half
            limit = min(limit, self.brake_to(gap - GAP_MIN_M - TIME_GAP_S * v))
        return limit

    def yield_limit(self, s_ego: float, v: float) -> float:
        """Hold before the next junction (front bumper STOP_MARGIN_M before it) while a
        crossing object will be on the ego's path there within CRITICAL_GAP_S of the ego's
        arrival at the hold point; with the front bumper COMMIT_M into it, clear the junction."""
        _, s, _, junctions = self.route
        for s_in, s_out in junctions:
            d = s_in - s_ego - FRONT_M - STOP_MARGIN_M
            if d < -STOP_MARGIN_M - COMMIT_M:
                continue  # committed to (or past) this junction
            until_s = max(d, 0.0) / max(v, APPROACH_MPS) + CRITICAL_GAP_S
            zone = slice(int(np.searchsorted(s, s_in)), int(np.searchsorted(s, s_out)) + 1)
            obj = self.first_crossing(zone, until_s)
            limit = math.inf if obj is None else self.brake_to(d)
            if (limit < self.args.cruise) != self.yielding:  # log when it binds or frees
                self.yielding = not self.yielding
                self.get_logger().info(
                    f"yielding to the object at ({obj[0]:.1f}, {obj[1]:.1f}), {obj[4]:.1f} m/s, "
                    f"{d:.1f} m before the junction" if self.yielding else "clear to go")
            return limit
        return math.inf

    def first_crossing(self, zone: slice, until_s: float) -> tuple | None:
        """The first moving object that, at constant velocity, comes within CONFLICT_M of the
        route points `zone` within until_s from now (at most HORIZON_S), heading across the
        route there. Predicted from the objects' stamp: on a loaded host they arrive late."""
        xy, _, _, _ = self.route
        path = xy[zone]
        moving = self.objects[self.objects[:, 4] >= MOVING_MPS]
        if len(path) < 2 or len(moving) == 0:
            return None
        seg = np.diff(path, axis=0)
        path_yaw = np.arctan2(seg[:, 1], seg[:, 0])
        path_yaw = np.append(path_yaw, path_yaw[-1])  # the last point: its segment's heading
        age_s = max(self.now_s - self.objects_s, 0.0)
        t = age_s + np.arange(0.0, min(until_s, HORIZON_S) + 1e-9, PREDICT_STEP_S)
        x, y, _, yaw, speed = moving.T[:, :, None]  # each (objects, 1)
        px, py = x + speed * np.cos(yaw) * t, y + speed * np.sin(yaw) * t  # (objects, times)
        d = np.hypot(px[..., None] - path[:, 0], py[..., None] - path[:, 1])  # (.., route pts)
        k = d.argmin(axis=2)  # the route point nearest each object at each time
        near = d.min(axis=2) < CONFLICT_M
        crossing = np.abs(np.angle(np.exp(1j * (yaw - path_yaw[k])))) > CROSSING_RAD
        hit = np.flatnonzero((near & crossing).any(axis=1))
        return tuple(moving[hit[0]]) if len(hit) else None


def _xy(text: str) -> tuple[float, ...]:
    try:
        values = tuple(float(v) for v in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not comma-separated numbers") from None
    if not all(math.isfinite(v) for v in values):
        raise argparse.ArgumentTypeError(f"{text!r}: not finite")
    return values


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--map", required=True, help="Lanelet2 OSM export of the map")
    parser.add_argument("--origin", type=_xy, default=(0.0, 0.0, 0.0),
                        help="LAT,LON,ALT of the map frame origin, as given to the export")
    parser.add_argument("--goal", type=_xy, default=(-1.75, 80.0),
                        help="X,Y of the goal in the map frame [m]; the ego stops there "
                        "(default: around the first block of the urban grid, three left "
                        "turns from the urban scenario's start)")
    parser.add_argument("--cruise", type=float, default=8.0, help="cruise speed [m/s]")
    parser.add_argument("--objects_topic", default="/perception/object_recognition/objects")
    parser.add_argument("--lights_topic",
                        default="/perception/traffic_light_recognition/traffic_signals")
    args, ros_args = parser.parse_known_args(argv)
    if len(args.origin) != 3 or len(args.goal) != 2:
        print("minimal_stack: --origin needs LAT,LON,ALT and --goal X,Y", file=sys.stderr)
        return 2
    rclpy.init(args=ros_args)
    try:
        node = MinimalStack(args)
    except (ValueError, RuntimeError) as exc:
        print(f"minimal_stack: {exc}", file=sys.stderr)
        rclpy.try_shutdown()
        return 2
    code = 0
    try:
        rclpy.spin(node)
    except SystemExit as exc:
        code = int(exc.code or 0)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
