"""Ground-truth node: what a stack would perceive, in the stack's own types (issue 12).

- ``traffic/agents`` -> autoware_perception_msgs PredictedObjects and TrackedObjects (Autoware's
  topics by default), in the map frame, stamped with the agents' simulation time, at most at
  ``objects_rate_hz`` of sim time (an agents message goes out if its stamp is at least a period
  after the last one sent; the others are never deserialised), optionally only within
  ``range_m`` of the ego (``vehicle/state``, read only then);
  ghosts of other shards are left out;
- ``traffic/lights`` -> autoware_perception_msgs TrafficLightGroupArray, group ids = the
  regulatory element ids of the Lanelet2 export (vehicle_sim_export_map) of the same map; one
  array for each traffic/lights message, with its stamp: the traffic node sends one at a change,
  else at its ``lights_rate_hz`` (10 Hz), well inside the 1.0 s after which Autoware's
  traffic_light module takes a signal for a stop (``tl_state_timeout``);
- the map's drivable area once, latched (reliable, transient local), as a nav_msgs
  OccupancyGrid on ``map`` (export.occupancy), stamped with the node's clock at start: 0 under
  sim time before the first /clock, as nav2's map_server stamps its map; for a static map tf2
  reads 0 as "the latest transform".

Conversions in ground_truth_msgs (the law); the objects go out as CDR bytes packed by
ground_truth_cdr straight from the agents' bytes (its tests pin them to those builders), the
builders serve big-endian input. Map exports in vehicle_sim.export. Where
autoware_perception_msgs is not installed the Autoware outputs are off (one log line); the grid
still goes out. Outputs are reliable keep-last 10 (a subscriber with the default QoS matches).
"""
from __future__ import annotations

import array

from nav_msgs.msg import OccupancyGrid
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rclpy.serialization import deserialize_message

from vehicle_sim.core.traffic.mapfile import load_map
from vehicle_sim.core.traffic.network import Network
from vehicle_sim.export.ground_truth_params import GroundTruthNodeParams
from vehicle_sim.export.lanelet2_osm import light_group_id
from vehicle_sim.export.occupancy import DrivableGrid, drivable_grid
from vehicle_sim.msg import TrafficAgentArray, TrafficLightArray, VehicleState
from vehicle_sim.nodes import qos
from vehicle_sim.nodes import traffic_msgs as tm
from vehicle_sim.nodes.agent_cdr import decode_agents
from vehicle_sim.nodes.main import NodeEntry, run_nodes
from vehicle_sim.nodes.params import declare_and_load
from vehicle_sim.nodes.state_cdr import header_stamp_ns
from vehicle_sim.paths import config_path

OUT = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)  # the ROS default QoS


def grid_msg(grid: DrivableGrid, frame: str, stamp) -> OccupancyGrid:
    msg = OccupancyGrid()
    msg.header.frame_id, msg.header.stamp = frame, stamp
    msg.info.map_load_time = stamp
    msg.info.resolution = grid.resolution_m
    msg.info.height, msg.info.width = grid.cells.shape
    msg.info.origin.position.x, msg.info.origin.position.y = grid.origin_xy_m
    msg.info.origin.orientation.w = 1.0
    msg.data = array.array("b", grid.cells.tobytes())
    return msg


class GroundTruthNode(Node):
    def __init__(self, **options) -> None:
        super().__init__("ground_truth", **options)
        self.p = declare_and_load(self, GroundTruthNodeParams)
        path = config_path(self.p.map_file)
        self.network = Network(load_map(path), str(path))
        self.group_ids = {name: light_group_id(k)
                          for k, name in enumerate(self.network.light_names)}
        self.ego_xy: tuple[float, float] | None = None
        self.period_ns = round(1e9 / self.p.objects_rate_hz)
        self.next_ns = self.last_ns = -1  # objects schedule in sim time [ns]
        try:
            from vehicle_sim.nodes import ground_truth_cdr as gtc
            from vehicle_sim.nodes import ground_truth_msgs as gt
        except ImportError as exc:
            gt = gtc = None
            self.get_logger().warning(f"autoware_perception_msgs not installed ({exc}): "
                                      "objects and traffic lights in Autoware types are off")
        self.gt = gt
        self.encoder = None if gtc is None else gtc.ObjectsEncoder(
            self.p.frame_id, self.p.prediction_horizon_s, self.p.prediction_step_s)
        self.gtc = gtc
        self.pub_objects = self.pub_tracked = self.pub_lights = None
        if gt is not None:
            from autoware_perception_msgs.msg import (
                PredictedObjects,
                TrackedObjects,
                TrafficLightGroupArray,
            )
            if self.p.objects_topic:
                self.pub_objects = self.create_publisher(PredictedObjects,
                                                         self.p.objects_topic, OUT)
            if self.p.tracked_topic:
                self.pub_tracked = self.create_publisher(TrackedObjects, self.p.tracked_topic,
                                                         OUT)
            if self.p.traffic_lights_topic:
                self.pub_lights = self.create_publisher(TrafficLightGroupArray,
                                                        self.p.traffic_lights_topic, OUT)
            # raw: only the messages that go out are deserialised, the others' stamps read from
            # their bytes (state_cdr.header_stamp_ns): at 20 Hz of agents, deserialising only
            # the 10 Hz that go out halves the node's work (10x that in a lockstep engine run)
            self.create_subscription(TrafficAgentArray, self.p.agents_topic, self._on_agents,
                                     qos.LARGE_STREAM, raw=True)
            self.create_subscription(TrafficLightArray, self.p.lights_topic, self._on_lights,
                                     qos.LIGHTS)
            if self.p.range_m > 0.0:  # the ego's position serves the range filter only
                self.create_subscription(VehicleState, self.p.state_topic, self._on_state,
                                         qos.STATE)
        self.pub_grid = None
        if self.p.grid_topic:
            grid = drivable_grid(self.network, self.p.grid)
            self.pub_grid = self.create_publisher(OccupancyGrid, self.p.grid_topic, qos.LATCHED)
            self.pub_grid.publish(grid_msg(grid, self.p.frame_id,
                                           self.get_clock().now().to_msg()))
        self.get_logger().info(
            f"map {self.p.map_file}: {len(self.group_ids)} light groups; Autoware outputs "
            f"{'on' if gt is not None else 'off'}, range "
            f"{f'{self.p.range_m:g} m' if self.p.range_m > 0 else 'all'}; grid "
            f"{self.p.grid_topic or 'off'} at {self.p.grid.resolution_m:g} m")

    def _on_state(self, msg: VehicleState) -> None:
        ego = tm.ego_from_state(msg)
        if ego is not None:
            self.ego_xy = (ego[0], ego[1])

    def _on_agents(self, data: bytes) -> None:
        t_ns = header_stamp_ns(data)
        if t_ns is None or self.last_ns <= t_ns < self.next_ns:
            return  # between two outputs at objects_rate_hz (sim time going back re-anchors)
        try:
            agents = decode_agents(data)
            built = (deserialize_message(data, TrafficAgentArray) if agents is None
                     else None)  # big endian: the builders
        except (ValueError, IndexError, RuntimeError) as exc:  # hostile or truncated bytes
            self.get_logger().warning(f"dropped a malformed {self.p.agents_topic} message "
                                      f"({exc})", throttle_duration_sec=5.0)
            return  # ... without taking the slot of the next good one
        self.last_ns, self.next_ns = t_ns, t_ns + self.period_ns
        if built is not None:
            self._publish_built(built)
            return
        rows = self.gtc.in_range(agents.rows, self.ego_xy, self.p.range_m)
        if self.pub_objects is not None:
            self.pub_objects.publish(self.encoder.predicted_objects(agents, rows))
        if self.pub_tracked is not None:
            self.pub_tracked.publish(self.encoder.tracked_objects(agents, rows))

    def _publish_built(self, msg: TrafficAgentArray) -> None:
        agents = self.gt.in_range(msg.agents, self.ego_xy, self.p.range_m)
        msg.header.frame_id = self.p.frame_id
        if self.pub_objects is not None:
            self.pub_objects.publish(self.gt.predicted_objects(
                agents, msg.header, self.p.prediction_horizon_s, self.p.prediction_step_s))
        if self.pub_tracked is not None:
            self.pub_tracked.publish(self.gt.tracked_objects(agents, msg.header))

    def _on_lights(self, msg: TrafficLightArray) -> None:
        if self.pub_lights is None:
            return
        out, unknown = self.gt.light_groups(msg, self.group_ids)
        if unknown:
            self.get_logger().warning(
                f"{len(unknown)} lights not in map {self.p.map_file} (e.g. {unknown[0]!r}): "
                "is the traffic node on another map?", throttle_duration_sec=5.0)
        self.pub_lights.publish(out)


# how a process runs this node (nodes.main; vehicle_sim_compose runs several in one)
ENTRY = NodeEntry(GroundTruthNode, "ground_truth")


def main(args: list[str] | None = None) -> int:
    return run_nodes([(ENTRY, [])], args)
