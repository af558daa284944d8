"""The ground-truth node over real DDS next to a real traffic node: agents as Autoware
PredictedObjects / TrackedObjects, lights as a TrafficLightGroupArray whose ids are the Lanelet2
export's, the range filter around the ego, and the latched drivable-area OccupancyGrid.

The test node plays the dynamics node (/clock and vehicle/state), so stamps are known. Outputs
are compared message by message with the traffic node's input of the same stamp (reliable QoS;
no assumption on how many messages arrive)."""
from __future__ import annotations

import itertools
import math
import os
import subprocess
import sys
import time

import numpy as np
import pytest
import yaml
from nav_msgs.msg import OccupancyGrid
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock
from vehicle_sim.msg import TrafficAgentArray, TrafficLight, TrafficLightArray, VehicleState

from vehicle_sim.core.traffic.mapfile import load_map
from vehicle_sim.core.traffic.network import Network
from vehicle_sim.export.lanelet2_osm import light_group_id
from vehicle_sim.export.occupancy import FREE, OCCUPIED
from vehicle_sim.nodes import qos
from vehicle_sim.nodes.conversions import quaternion_from_rpy, stamp, to_ns
from vehicle_sim.paths import config_path

apm = pytest.importorskip("autoware_perception_msgs.msg",
                          reason="the set-up builds autoware_perception_msgs (interfaces/)")

MS = 1_000_000
DT = 50 * MS  # the traffic node's default 20 Hz step
SIM = {"use_sim_time": True}
RX = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
OBJECTS = "/perception/object_recognition/objects"
TRACKED = "/perception/object_recognition/tracking/objects"
LIGHTS = "/perception/traffic_light_recognition/traffic_signals"


pytestmark = pytest.mark.usefixtures("warm_traffic")  # test/ros/conftest.py


class Rig:
    """Drives /clock and vehicle/state; collects the traffic node's and our node's outputs."""

    def __init__(self, node):
        self.node = node
        self.got: dict[str, list] = {k: [] for k in ("agents", "lights", "objects", "tracked",
                                                      "groups")}
        self.subs = [node.create_subscription(t, topic, self.got[key].append, RX) for key, t,
                     topic in (("agents", TrafficAgentArray, "traffic/agents"),
                               ("lights", TrafficLightArray, "traffic/lights"),
                               ("objects", apm.PredictedObjects, OBJECTS),
                               ("tracked", apm.TrackedObjects, TRACKED),
                               ("groups", apm.TrafficLightGroupArray, LIGHTS))]
        self.clock = node.create_publisher(Clock, "/clock", qos.STREAM)
        self.state = node.create_publisher(VehicleState, "vehicle/state", qos.STATE)

    def close(self):
        for sub in self.subs:
            self.node.destroy_subscription(sub)
        self.node.destroy_publisher(self.clock)
        self.node.destroy_publisher(self.state)

    def run_until(self, done, what: str, ego=None, timeout_s: float = 40.0) -> None:
        """Tick /clock a step at a time (and send the ego) until done()."""
        deadline, t = time.monotonic() + timeout_s, DT
        while not done():
            assert time.monotonic() < deadline, f"timed out waiting for {what}"
            if ego is not None:
                msg = VehicleState(child_frame_id="base_link", model="test")
                msg.header.stamp, msg.header.frame_id = stamp(t), "odom"
                msg.pose.position.x, msg.pose.position.y = ego[0], ego[1]
                msg.pose.orientation = quaternion_from_rpy(0.0, 0.0, ego[2])
                self.state.publish(msg)
            self.clock.publish(Clock(clock=stamp(t)))
            t += DT
            end = time.monotonic() + 0.05
            while time.monotonic() < end:
                self.node.test_executor.spin_once(timeout_sec=0.01)

    def pairs(self, key: str, source: str = "agents"):
        """(input, output) messages of the same stamp."""
        by_stamp = {to_ns(m.header.stamp): m for m in self.got[source]}
        return [(by_stamp[to_ns(m.header.stamp)], m) for m in self.got[key]
                if to_ns(m.header.stamp) in by_stamp]


@pytest.fixture
def rig(ros_node):
    r = Rig(ros_node)
    yield r
    r.close()


def city(tmp_path, agents: int) -> str:
    path = tmp_path / "city.yaml"
    path.write_text(yaml.safe_dump({"initial_agents": agents,
                                    "zone": {"enabled": False, "sector_size_m": 210.0}}))
    return str(path)


def yaw_of(q) -> float:
    return math.atan2(2.0 * (q.w * q.z + q.x * q.y), 1.0 - 2.0 * (q.y * q.y + q.z * q.z))


def test_agents_and_lights_go_out_in_autoware_types(rig, start_node, tmp_path):
    start_node("traffic_node", params={**SIM, "publish_markers": False,
                                       "params_file": city(tmp_path, 30)})
    start_node("ground_truth_node", params={**SIM, "grid_topic": "''"})
    rig.run_until(lambda: rig.pairs("objects") and rig.pairs("tracked")
                  and _light_pairs(rig) and any(len(a.agents) for a, _ in rig.pairs("objects"))
                  and _span_s(rig.got["groups"]) >= 2.0,
                  "objects, tracked objects and 2 s of light groups")
    for agents, objects in rig.pairs("objects"):
        assert objects.header.frame_id == "map"
        assert len(objects.objects) == len(agents.agents) == 30
        for a, o in zip(agents.agents, objects.objects, strict=True):
            assert bytes(o.object_id.uuid) == a.id.to_bytes(16, "big")
            assert o.classification[0].label == apm.ObjectClassification.CAR
            assert o.classification[0].probability == 1.0 and o.existence_probability == 1.0
            k = o.kinematics
            pose = k.initial_pose_with_covariance.pose
            assert (pose.position.x, pose.position.y) == (a.pose.position.x, a.pose.position.y)
            assert pose.position.z == pytest.approx(0.75)  # half the 1.5 m car box
            assert pose.orientation == a.pose.orientation
            assert k.initial_twist_with_covariance.twist.linear.x == a.speed
            assert k.initial_twist_with_covariance.twist.angular.z == a.yaw_rate
            assert k.initial_acceleration_with_covariance.accel.linear.x == a.acceleration
            assert o.shape.type == apm.Shape.BOUNDING_BOX
            assert o.shape.dimensions.x == pytest.approx(a.length)
            assert o.shape.dimensions.y == pytest.approx(a.width)
            path = k.predicted_paths[0]
            assert len(path.path) == 11 and path.time_step.nanosec == 500_000_000
            end = path.path[-1].position  # 5 s at constant speed and yaw rate
            dist = math.hypot(end.x - a.pose.position.x, end.y - a.pose.position.y)
            assert dist == pytest.approx(5.0 * a.speed, rel=0.02, abs=0.01)
    sent = [to_ns(m.header.stamp) for m in rig.got["objects"]]
    assert all(b - a >= 100 * MS for a, b in itertools.pairwise(sent)), "objects_rate_hz 10"
    for agents, tracked in rig.pairs("tracked"):
        for a, o in zip(agents.agents, tracked.objects, strict=True):
            pose = o.kinematics.pose_with_covariance.pose
            assert (pose.position.x, pose.position.y) == (a.pose.position.x, a.pose.position.y)
            assert o.kinematics.is_stationary == (abs(a.speed) < 0.1)
    net = Network(load_map(config_path("maps/urban_grid.yaml")))
    colour = {0: apm.TrafficLightElement.GREEN, 1: apm.TrafficLightElement.AMBER,
              2: apm.TrafficLightElement.RED}
    for lights, groups in _light_pairs(rig):
        vehicle = [light for light in lights.lights if not light.pedestrian]
        assert TrafficLight.STATE_DARK not in {light.state for light in vehicle}  # no zone
        assert len(groups.traffic_light_groups) == len(vehicle) == len(net.light_names)
        for light, group in zip(vehicle, groups.traffic_light_groups, strict=True):
            assert group.traffic_light_group_id == light_group_id(
                net.light_names.index(light.id))
            assert group.elements[0].color == colour[light.state]
            assert group.elements[0].shape == apm.TrafficLightElement.CIRCLE
    # Autoware's traffic_light module takes a signal older than tl_state_timeout (1.0 s) for a
    # stop: the newest signal is never half that old (every array is sent reliably)
    stamps = [to_ns(g.stamp) for g in rig.got["groups"]]
    assert max(b - a for a, b in itertools.pairwise(stamps)) < 500 * MS, stamps


def test_a_dark_light_is_left_out_of_the_groups_and_a_pedestrian_light_too():
    """A light the traffic does not run (outside the control zone) is not perceived: no group
    (an UNKNOWN colour is a stop in some Autoware versions, a pass in others)."""
    gt = pytest.importorskip("vehicle_sim.nodes.ground_truth_msgs")
    msg = TrafficLightArray(lights=[
        TrafficLight(id="a", state=TrafficLight.STATE_GREEN),
        TrafficLight(id="b", state=TrafficLight.STATE_DARK),
        TrafficLight(id="c", state=TrafficLight.STATE_RED),
        TrafficLight(id="d", state=TrafficLight.STATE_GREEN, pedestrian=True)])
    msg.header.stamp = stamp(7 * DT)
    out, unknown = gt.light_groups(msg, {"a": 11, "b": 12, "c": 13, "d": 14})
    assert unknown == [] and to_ns(out.stamp) == 7 * DT
    assert [(g.traffic_light_group_id, g.elements[0].color, g.elements[0].status)
            for g in out.traffic_light_groups] == [
        (11, apm.TrafficLightElement.GREEN, apm.TrafficLightElement.SOLID_ON),
        (13, apm.TrafficLightElement.RED, apm.TrafficLightElement.SOLID_ON)]


def _span_s(groups) -> float:
    return (to_ns(groups[-1].stamp) - to_ns(groups[0].stamp)) * 1e-9 if groups else 0.0


def _light_pairs(rig: Rig):
    by_stamp = {to_ns(m.header.stamp): m for m in rig.got["lights"]}
    return [(by_stamp[to_ns(g.stamp)], g) for g in rig.got["groups"]
            if to_ns(g.stamp) in by_stamp]


def test_range_keeps_the_agents_near_the_ego(rig, start_node, tmp_path):
    ego, range_m = (200.0, 198.25, 0.0), 80.0
    start_node("traffic_node", params={**SIM, "publish_markers": False,
                                       "params_file": city(tmp_path, 40)})
    start_node("ground_truth_node", params={**SIM, "grid_topic": "''", "range_m": range_m})

    def near(a) -> bool:
        return math.hypot(a.pose.position.x - ego[0], a.pose.position.y - ego[1]) <= range_m

    def filtered() -> bool:  # a message with agents on both sides of the range, filtered
        return any(any(not near(a) for a in agents.agents) and any(near(a) for a in agents.agents)
                   and [o.object_id.uuid.tobytes() for o in objects.objects]
                   == [a.id.to_bytes(16, "big") for a in agents.agents if near(a)]
                   for agents, objects in rig.pairs("objects"))

    rig.run_until(filtered, "objects within the range only", ego=ego)


def test_the_drivable_area_is_a_latched_occupancy_grid(ros_node, start_node, assert_refuses):
    start_node("ground_truth_node", params={"map_file": "maps/crossroad.yaml",
                                            "grid.resolution_m": 0.5})
    grids: list[OccupancyGrid] = []
    sub = ros_node.create_subscription(OccupancyGrid, "map", grids.append, qos.LATCHED)
    try:
        ros_node.spin_until(lambda: grids, what="the latched map")  # late joiner gets it
        g = grids[0]
        assert g.header.frame_id == "map" and g.info.resolution == pytest.approx(0.5)
        assert len(g.data) == g.info.width * g.info.height

        def cell(x: float, y: float) -> int:
            col = int((x - g.info.origin.position.x) // g.info.resolution)
            row = int((y - g.info.origin.position.y) // g.info.resolution)
            return g.data[row * g.info.width + col]

        assert cell(-40.0, -1.75) == FREE and cell(-40.0, 1.75) == FREE  # west street
        assert cell(0.0, 0.0) == FREE  # the junction
        assert cell(-40.0, 10.0) == OCCUPIED and cell(5.0, 5.0) == OCCUPIED  # kerb, tree1
        assert cell(40.0, 40.0) == OCCUPIED
    finally:
        ros_node.destroy_subscription(sub)
    assert_refuses("ground_truth_node", {"grid.resolution_m": 0.001}, "grid.resolution_m")


def test_without_autoware_messages_the_grid_still_goes_out(ros_node, tmp_path):
    """autoware_perception_msgs hidden from the node process: one warning, grid on."""
    code = ("import sys; sys.modules['autoware_perception_msgs'] = None; "
            "from vehicle_sim.nodes.ground_truth_node import main; sys.exit(main())")
    proc = subprocess.Popen([sys.executable, "-c", code, "--ros-args", "-p",
                             "map_file:=maps/crossroad.yaml", "-p", "grid.resolution_m:=1.0"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=os.environ.copy(), cwd=tmp_path)  # not the source tree
    grids: list[OccupancyGrid] = []
    sub = ros_node.create_subscription(OccupancyGrid, "map", grids.append, qos.LATCHED)
    try:
        ros_node.spin_until(lambda: grids or proc.poll() is not None, what="the latched map")
    finally:
        ros_node.destroy_subscription(sub)
        proc.send_signal(2)
        out = proc.communicate(timeout=10)[0]
    assert grids, out
    assert out.count("autoware_perception_msgs not installed") == 1, out
    assert proc.returncode == 0, out


def test_a_malformed_agents_message_is_dropped_with_a_line_and_the_next_goes_out(
        rig, start_node):
    """Raw bytes on traffic/agents that do not hold the agents they announce, or are no CDR at
    all (a stub, a hostile publisher): one warning (seen on /rosout), no crash, and a good
    message after it still
    becomes objects. The node's agents reader keeps the newest message only, so each kind is
    sent until its effect is seen."""
    from rcl_interfaces.msg import Log
    from rclpy.qos import DurabilityPolicy

    from vehicle_sim.nodes.traffic_msgs import AgentEncoder, agent_ids
    warnings: list[str] = []
    rosout = rig.node.create_subscription(
        Log, "/rosout", lambda m: warnings.append(m.msg) if m.name == "ground_truth" else None,
        QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE,
                   durability=DurabilityPolicy.TRANSIENT_LOCAL))
    pub = rig.node.create_publisher(TrafficAgentArray, "traffic/agents", qos.LARGE_STREAM)
    node = start_node("ground_truth_node", params={**SIM, "grid_topic": "''"})
    encoder = AgentEncoder(["lane_a"])
    one = {k: np.zeros(1) for k in ("x", "y", "yaw", "speed", "lateral_speed", "yaw_rate",
                                     "steer", "accel", "s", "length", "width")}
    one.update(uid=np.array([7]), lane=np.array([0]), profile=np.array([1]),
               dynamic=np.array([0]), ghost=np.array([False]), crashed=np.array([False]),
               instruction=np.array([0]), fault_id=np.array([0]))
    none = {k: v[:0] for k, v in one.items()}
    count_at = len(encoder.encode(none, np.zeros(0, dtype=int), 0, "map", "test")) - 4
    t_ns = [0]

    def send(malformed: bool):
        def step() -> bool:
            t_ns[0] += 200 * MS  # beyond objects_rate_hz's 100 ms: each one is due
            data = bytearray(encoder.encode(one, np.zeros(1, dtype=int), t_ns[0], "map",
                                            "test"))
            if malformed and t_ns[0] % (400 * MS):  # the first one sent
                data[:2] = b"\xff\xff"  # no CDR encapsulation at all
            elif malformed:
                data[count_at:count_at + 4] = (5).to_bytes(4, "little")  # 5 agents in 1's bytes
            pub.publish(bytes(data))
            return (any("dropped a malformed traffic/agents message" in w for w in warnings)
                    if malformed else bool(rig.got["objects"]))
        return step

    rig.run_until(send(True), "the warning of a malformed agents message")
    assert not rig.got["objects"], "a malformed message became objects"
    rig.run_until(send(False), "objects from a good message after it")
    assert [o.object_id.uuid.tobytes() for o in rig.got["objects"][0].objects] == \
        [int(agent_ids(np.array([7]))[0]).to_bytes(16, "big")]
    out = node.stop()
    assert node.proc.returncode == 0, out
    rig.node.destroy_publisher(pub)
    rig.node.destroy_subscription(rosout)
