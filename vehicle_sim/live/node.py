"""vehicle_sim_live: a Foxglove WebSocket server that streams a running graph (issue 15).

Subscribes to the graph and logs to Foxglove channels: ``/live/ego``, ``/live/agents``,
``/live/lights`` and ``/live/map`` (foxglove.SceneUpdate: boxes, spheres, the map's lane lines,
objects and signs from the latched map/markers, re-sent every ``MAP_REPEAT_S`` for late clients),
``/live/gnss`` (foxglove.LocationFix) and JSON channels ``/live/status`` (sim/status),
``/live/accidents``, ``/live/imu`` (decimated to ``IMU_RATE_HZ`` of sim time) and
``/live/ego_state``. Log times are simulation time.

Parameters: ``host`` (default 127.0.0.1: only this machine; another address is an explicit
choice, the protocol has no authentication), ``port`` (8765, Foxglove's default) and
``vehicle_file`` (the ego's, relative to the config dir or absolute: its chassis length and width
are the ego's box; the runner and the launch file pass the run's). Open Foxglove (app or
https://app.foxglove.dev), "Open connection", Foxglove WebSocket, ws://127.0.0.1:8765. Exit 2
with one line when foxglove-sdk is missing, the vehicle file does not read or the port is taken.
"""
from __future__ import annotations

import sys

from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import Imu, NavSatFix
from visualization_msgs.msg import MarkerArray

from vehicle_sim.core.dynamics_params import DynamicsParams
from vehicle_sim.core.vehicle.params import load_vehicle
from vehicle_sim.msg import (
    AccidentEvent,
    SimStatus,
    TrafficAgentArray,
    TrafficLightArray,
    VehicleState,
)
from vehicle_sim.nodes import qos
from vehicle_sim.nodes.conversions import to_ns
from vehicle_sim.nodes.main import run
from vehicle_sim.paths import config_path

MAP_REPEAT_S = 2.0  # [s] wall: the map scene again, for a client that connected later (a choice)
DEFAULT_VEHICLE_FILE = DynamicsParams().vehicle_file  # the dynamics node's ego (medium car)
IMU_RATE_HZ = 50.0  # [Hz] sim time: IMU samples forwarded (a choice: a plot, not the full rate)
STREAM_IN = QoSProfile(depth=10, reliability=ReliabilityPolicy.BEST_EFFORT)  # matches any writer
JSON_OBJECT = {"type": "object"}


class LiveView(Node):
    def __init__(self, foxglove) -> None:
        super().__init__("live_view")
        from foxglove.channels import LocationFixChannel, SceneUpdateChannel

        from vehicle_sim.live import scene
        self.scene = scene
        host = self.declare_parameter("host", "127.0.0.1").value
        port = self.declare_parameter("port", 8765).value
        if not isinstance(host, str) or not isinstance(port, int) or not 0 <= port <= 65535:
            raise ValueError(f"host {host!r} / port {port!r}: a host name and a port 0..65535")
        vehicle_file = self.declare_parameter("vehicle_file", DEFAULT_VEHICLE_FILE).value
        # before the server starts: a file that does not read refuses the start (ConfigError)
        chassis = load_vehicle(config_path(vehicle_file)).chassis
        self.ego_size_m = (chassis.length_m, chassis.width_m)
        self.server = foxglove.start_server(name="vehicle_sim", host=host, port=port)
        self.port = self.server.port
        self.scenes = {n: SceneUpdateChannel(f"/live/{n}") for n in ("ego", "agents", "lights",
                                                                       "map")}
        self.gnss = LocationFixChannel("/live/gnss")
        self.json = {n: foxglove.Channel(f"/live/{n}", schema=JSON_OBJECT, message_encoding="json")
                     for n in ("status", "accidents", "imu", "ego_state")}
        self._map = None
        self._next_imu_ns = 0
        sub = self.create_subscription
        sub(VehicleState, "vehicle/state", self._on_state, STREAM_IN)
        sub(TrafficAgentArray, "traffic/agents", self._on_agents, STREAM_IN)
        sub(TrafficLightArray, "traffic/lights", self._on_lights, STREAM_IN)
        sub(MarkerArray, "map/markers", self._on_map, qos.LATCHED)
        sub(AccidentEvent, "accidents", self._on_accident, qos.EVENT)
        sub(SimStatus, "sim/status", self._on_status, qos.EVENT)
        sub(Imu, "imu/data", self._on_imu, STREAM_IN)
        sub(NavSatFix, "gnss/fix", self._on_gnss, STREAM_IN)
        self.create_timer(MAP_REPEAT_S, self._repeat_map)  # a wall-clock timer: see module doc
        self.get_logger().info(f"live view: Foxglove WebSocket on ws://{host}:{self.port}")

    def _on_state(self, msg) -> None:
        t = to_ns(msg.header.stamp)
        self.scenes["ego"].log(self.scene.ego_scene(msg, *self.ego_size_m), log_time=t)
        p, v = msg.pose.position, msg.twist.linear
        self.json["ego_state"].log({"x_m": p.x, "y_m": p.y, "speed_mps": v.x,
                                    "lateral_speed_mps": v.y}, log_time=t)

    def _on_agents(self, msg) -> None:
        self.scenes["agents"].log(self.scene.agents_scene(msg), log_time=to_ns(msg.header.stamp))

    def _on_lights(self, msg) -> None:
        self.scenes["lights"].log(self.scene.lights_scene(msg), log_time=to_ns(msg.header.stamp))

    def _on_map(self, msg) -> None:
        self._map = self.scene.map_scene(msg)
        self._repeat_map()

    def _repeat_map(self) -> None:
        if self._map is not None:
            self.scenes["map"].log(self._map)

    def _on_accident(self, msg) -> None:
        self.json["accidents"].log(
            {"id": msg.id, "actor": msg.actor, "victim": msg.victim, "actor_part": msg.actor_part,
             "victim_part": msg.victim_part, "impact_speed_mps": msg.impact_speed,
             "x_m": msg.position.x, "y_m": msg.position.y}, log_time=to_ns(msg.header.stamp))

    def _on_status(self, msg) -> None:
        self.json["status"].log(
            {"sim_time_s": msg.sim_time, "real_time_factor": msg.real_time_factor,
             "overruns": msg.overruns, "lateness_p99_s": msg.lateness_p99,
             "paused": msg.paused, "command_timeout": msg.command_timeout},
            log_time=to_ns(msg.header.stamp))

    def _on_imu(self, msg) -> None:
        t = to_ns(msg.header.stamp)
        if t < self._next_imu_ns:
            return
        self._next_imu_ns = t + round(1e9 / IMU_RATE_HZ)
        a, w = msg.linear_acceleration, msg.angular_velocity
        self.json["imu"].log({"ax_mps2": a.x, "ay_mps2": a.y, "az_mps2": a.z, "gx_radps": w.x,
                              "gy_radps": w.y, "gz_radps": w.z}, log_time=t)

    def _on_gnss(self, msg) -> None:
        from foxglove.messages import LocationFix
        self.gnss.log(LocationFix(timestamp=self.scene.stamp(msg.header.stamp),
                                  frame_id=msg.header.frame_id, latitude=msg.latitude,
                                  longitude=msg.longitude, altitude=msg.altitude),
                      log_time=to_ns(msg.header.stamp))

    def stop(self) -> None:
        self.server.stop()


def main(args: list[str] | None = None) -> int:
    try:
        import foxglove
    except ImportError:
        print("vehicle_sim_live: needs foxglove-sdk (pip install 'vehicle_sim[live]')",
              file=sys.stderr)
        return 2

    def make() -> LiveView:
        try:
            return LiveView(foxglove)
        except (RuntimeError, OSError) as exc:  # e.g. the port is taken: refused, exit 2
            raise ValueError(str(exc)) from exc
    # the nodes' own start, signal handling and bounded clean-up (a SIGINT from ros2 launch
    # during rclpy.spin gave a traceback)
    return run(make, "live_view", args)
