"""Recorder: writes the recorded topics, serialized as received (CDR), to a rosbag2-compatible
MCAP file (`ros2 bag info/play <file>` read it as it is; vehicle_sim/recording.py says how).

Subscriptions are made as topics appear, with a QoS compatible with their publishers (reliable
and transient-local only when every publisher is, as rosbag2 adapts its requests). A topic's
channel is written at its first message, with the QoS its publishers offer (so `ros2 bag play`
re-offers transient-local topics as such). Log times are the node's clock: simulation time with
use_sim_time. The MCAP metadata names the map and the ego's vehicle file of the run (record
`vehicle_sim`, keys map_file and vehicle_file).

Lockstep (parameter ``lockstep``): the recorder is a lockstep peer. It acknowledges frame t once
it has the vehicle state stamped t, so the dynamics is never more than one frame (two states)
ahead of it and the state publisher's queue (qos.STATE, 10 deep) never drops one it has not
delivered: a busy machine slows the run down instead of thinning the recording. Its first
frame waits until the run's nodes are in the graph (lockstep_peer.LockstepPeer). The /clock
tick and the vehicle state the dynamics re-sends while a lockstep frame is stalled are each
recorded once: a /clock or /vehicle/state message whose time is the last recorded one of its
topic is dropped (RESENT_ON_STALL).
"""
from __future__ import annotations

from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

from vehicle_sim.nodes import qos
from vehicle_sim.nodes.lockstep_peer import LockstepPeer
from vehicle_sim.nodes.main import NodeEntry, run_nodes
from vehicle_sim.nodes.params import declare_and_load
from vehicle_sim.nodes.qos import offered
from vehicle_sim.nodes.state_cdr import header_stamp_ns
from vehicle_sim.recording import RecorderParams, offered_qos_yaml, ros2msg_schema
from vehicle_sim.recording_writer import McapRecording


def _like(publisher_qos: QoSProfile) -> QoSProfile:
    """A subscription that matches publishers of that QoS and keeps a burst of samples (100,
    or the publishers' depth where it is deeper: a burst of 1000 fault answers)."""
    return QoSProfile(depth=max(100, publisher_qos.depth), reliability=publisher_qos.reliability,
                      durability=publisher_qos.durability)


# topics of vehicle_sim's own nodes: type and the QoS they are published with (nodes/qos.py),
# subscribed at once so that a fast run is recorded from its first step; /clock's depends on the
# mode (known_topics)
KNOWN_TOPICS = {
    "/clock": ("rosgraph_msgs/msg/Clock", qos.clock(lockstep=False)),
    "/vehicle/state": ("vehicle_sim/msg/VehicleState", qos.STATE),
    "/odom": ("nav_msgs/msg/Odometry", qos.STATE),
    "/vehicle/control": ("vehicle_sim/msg/VehicleControl", qos.COMMAND),
    "/autonomy/control": ("vehicle_sim/msg/VehicleControl", qos.COMMAND),
    "/sim/status": ("vehicle_sim/msg/SimStatus", qos.EVENT),
    "/traffic/agents": ("vehicle_sim/msg/TrafficAgentArray", qos.LARGE_STREAM),
    "/traffic/lights": ("vehicle_sim/msg/TrafficLightArray", qos.LIGHTS),
    "/accidents": ("vehicle_sim/msg/AccidentEvent", qos.EVENT),
    "/motion/cue": ("vehicle_sim/msg/MotionCue", qos.STREAM),
    "/imu/data": ("sensor_msgs/msg/Imu", qos.SENSOR),
    "/gnss/fix": ("sensor_msgs/msg/NavSatFix", qos.SENSOR),
    "/gnss/velocity": ("geometry_msgs/msg/TwistWithCovarianceStamped", qos.SENSOR),
    # from the first frame: a bag replayed into a filter needs the transforms of its first
    # samples (found by discovery, /tf missed its first ~0.2 s)
    "/tf": ("tf2_msgs/msg/TFMessage", qos.TF),
    "/tf_static": ("tf2_msgs/msg/TFMessage", qos.TF_STATIC),
    "/faults/status": ("vehicle_sim/msg/FaultStatus", qos.FAULT_STATUS),
}


class RecorderNode(Node):
    def __init__(self, **options) -> None:
        super().__init__("recorder", **options)
        self.p = declare_and_load(self, RecorderParams)
        self.recording = McapRecording(self.p.record_dir, self.p.map_file,
                                       "vehicle_sim recorder", self.p.vehicle_file)
        self.path = self.recording.path
        self._types: dict[str, str] = {}  # topic -> type, '' = not recordable
        self._declared: dict[str, QoSProfile] = {}  # publisher QoS of KNOWN_TOPICS
        self._schema_text: dict[str, str] = {}
        self._last_ns: dict[str, int] = {}  # RESENT_ON_STALL topic -> its last time recorded
        self.lockstep = (LockstepPeer(self, lambda t_ns: self._last_ns.get(STATE_TOPIC, -1) >= t_ns,
                                      lambda t_ns: (0, 0), lambda: None)
                         if self.p.lockstep else None)
        self._discover()
        self.create_timer(self.p.discovery_period_s, self._discover)
        self.get_logger().info(f"recording to {self.path}")

    def _discover(self) -> None:
        """Subscribe to wanted topics that appeared (published in one type only); known ones at
        once."""
        for topic, (datatype, profile) in known_topics(self.p.lockstep).items():
            if topic not in self._types and self.p.wanted(topic, datatype):
                self._declared[topic] = profile
                self._subscribe(topic, datatype, _like(profile))
        for topic, listed in self.get_topic_names_and_types():
            if topic in self._types or not any(self.p.wanted(topic, t) for t in listed):
                continue
            # the publishers' type: the graph also lists subscribers' (the bridge reads cmd_vel
            # as Twist until a TwistStamped publisher appears, nodes.type_following)
            types = {i.topic_type for i in self.get_publishers_info_by_topic(topic)}
            if len(types) > 1:
                self.get_logger().warning(f"not recording {topic} while it is published as "
                                          f"{' and '.join(sorted(types))}",
                                          throttle_duration_sec=60.0)
            if len(types) != 1 or not self.p.wanted(topic, next(iter(types))):
                continue
            self._subscribe(topic, types.pop(), self._qos_for(topic))

    def _subscribe(self, topic: str, datatype: str, profile: QoSProfile) -> None:
        try:
            schema = ros2msg_schema(datatype)
            msg_type = _import(datatype)
        except (FileNotFoundError, ImportError, AttributeError, ValueError) as exc:
            self.get_logger().warning(f"not recording {topic}: {exc}")
            self._types[topic] = ""
            return
        self._types[topic] = datatype
        self._schema_text[topic] = schema
        self.create_subscription(msg_type, topic,
                                 lambda data, t=topic: self._write(t, data), profile, raw=True)

    def _channel(self, topic: str) -> None:
        """Register the topic's channel at its first message: its publishers are known now."""
        infos = self.get_publishers_info_by_topic(topic)
        profiles = [offered(i.qos_profile) for i in infos]
        if not profiles and topic in self._declared:
            profiles = [offered(self._declared[topic])]
        self.recording.add_channel(topic, self._types[topic], self._schema_text[topic],
                                   offered_qos_yaml(profiles))

    def _qos_for(self, topic: str) -> QoSProfile:
        infos = self.get_publishers_info_by_topic(topic)
        reliable = infos and all(i.qos_profile.reliability == ReliabilityPolicy.RELIABLE
                                 for i in infos)
        latched = infos and all(i.qos_profile.durability == DurabilityPolicy.TRANSIENT_LOCAL
                                for i in infos)
        return QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE if reliable
                          else ReliabilityPolicy.BEST_EFFORT,
                          durability=DurabilityPolicy.TRANSIENT_LOCAL if latched
                          else DurabilityPolicy.VOLATILE)

    def _write(self, topic: str, data: bytes) -> None:
        if topic in RESENT_ON_STALL:
            # (a Clock's time sits where a header's stamp does); None: too short for a stamp,
            # recorded as it came
            t_ns = header_stamp_ns(data)
            if t_ns is not None:
                if t_ns == self._last_ns.get(topic):  # re-sent by a stalled lockstep frame
                    return
                self._last_ns[topic] = t_ns
        if not self.recording.failure:  # (after one, the run goes on unrecorded: below)
            if not self.recording.has_channel(topic):
                self._channel(topic)
            self.recording.add_message(topic, self.get_clock().now().nanoseconds, data)
            failure = self.recording.new_failure()
            if failure:  # a lockstep recorder still acknowledges
                self.get_logger().error(failure)
        if topic == STATE_TOPIC and self.lockstep is not None:
            self.lockstep.pump()

    def stop(self) -> None:
        self.recording.finish()
        r = self.recording
        if r.failure:
            line = r.new_failure() or f"recording cut short: {r.failure}"
            self.get_logger().error(line)
            return
        self.get_logger().info(f"wrote {r.message_count} messages on {len(r.counts)} topics "
                               f"to {self.path}")


STATE_TOPIC = "/vehicle/state"
# topics the clock owner sends again while a lockstep frame stalls (dynamics_node._on_stalled):
# each time is recorded once, as the engine's recordings have it
RESENT_ON_STALL = ("/clock", STATE_TOPIC)


def known_topics(lockstep: bool) -> dict[str, tuple[str, QoSProfile]]:
    """KNOWN_TOPICS of a run in lockstep or not: in lockstep the clock owner offers /clock
    reliable, and the recorder (a lockstep peer) reads every tick so."""
    return {**KNOWN_TOPICS, "/clock": (KNOWN_TOPICS["/clock"][0], qos.clock(lockstep))}


def _import(datatype: str):
    pkg, _, name = datatype.split("/")
    module = __import__(f"{pkg}.msg", fromlist=[name])
    return getattr(module, name)


# how a process runs this node (nodes.main; vehicle_sim_compose runs several in one)
ENTRY = NodeEntry(RecorderNode, "recorder")


def main(args: list[str] | None = None) -> int:
    return run_nodes([(ENTRY, [])], args)
