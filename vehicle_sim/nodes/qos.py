"""QoS by role (conventions.md): streams best-effort keep-last-1, events reliable.

Per-topic override (ROS 2's standard mechanism, rclpy ``QoSOverridingOptions``): the publishers
created with ``overridable()`` (sensor outputs, vehicle/state, odom) declare the read-only
parameters ``qos_overrides.<fully qualified topic>.publisher.<policy>`` for reliability,
durability, history and depth, e.g.
``-p qos_overrides./imu/data.publisher.reliability:=best_effort`` or in a parameter file.
They are read once when the publisher is created.
"""
from enum import Enum

from rclpy.duration import Duration
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from rclpy.qos_overriding_options import QoSOverridingOptions

from vehicle_sim.recording import INFINITE_NS, OfferedQos


def _keep_last(depth: int, reliable: bool, transient_local: bool = False) -> QoSProfile:
    return QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=depth,
                      reliability=(ReliabilityPolicy.RELIABLE if reliable
                                   else ReliabilityPolicy.BEST_EFFORT),
                      durability=(DurabilityPolicy.TRANSIENT_LOCAL if transient_local
                                  else DurabilityPolicy.VOLATILE))


# high-rate state, IMU, platform streams and /clock: never block the publisher
STREAM = _keep_last(1, reliable=False)
# state at a moderate rate that tools (RViz, rosbag, stacks) subscribe to with the default QoS
STATE = _keep_last(10, reliable=True)
# large arrays at a moderate rate (traffic agents: ~120 B per agent, 600 kB at 5000 agents):
# best effort loses whole fragmented samples, reliable keep-last-1 delivers the newest
LARGE_STREAM = _keep_last(1, reliable=True)
# agent arrays as their readers (ego driver, accident node) take them: several traffic shards
# publish on one topic, so a deeper queue keeps one shard's array from pushing out another's;
# best effort, so a slow reader never holds back the LARGE_STREAM writer (it gets the newest)
AGENTS_IN = _keep_last(10, reliable=False)
# traffic-light arrays, writer and readers: reliable (re-sent at lights_rate_hz for late
# joiners; every step in lockstep, where each array is needed: a deep queue)
LIGHTS = _keep_last(10, reliable=True)
# traffic shard hand-overs and ghosts: reliable and deep so no agent is lost; volatile (stale
# after a restart)
HANDOVER = _keep_last(100, reliable=True)
# the raw vehicle state as the sensor nodes read it in real time: STREAM's best effort (matches
# the same writers) with a deeper queue, so a burst after a late physics step or a descheduled
# sensor process is modelled from every state; 50 states = 50 ms at 1 kHz, never stale for long
SENSOR_STATE_IN = _keep_last(50, reliable=False)
# commands from stacks and rigs: reliable, only the newest matters
COMMAND = _keep_last(1, reliable=True)
# collisions, faults, status changes: reliable, late joiners get the recent history
EVENT = _keep_last(100, reliable=True, transient_local=True)
# fault commands as read by the nodes owning a fault target: reliable + volatile, so it matches
# both EVENT (transient-local) and COMMAND publishers; a restarted node starts without faults,
# like power-cycled hardware. Deep: a burst of up to 1000 commands (a schedule, an instructor's
# script) is taken whole, none pushed out unanswered by the next (depth 100 answered 117 of 300
# sent at once); bounded, unlike keep-all, against a flood (and keep-last never blocks a writer)
FAULT_COMMAND = _keep_last(1000, reliable=True)
# fault answers (faults/status) as the fault owners and the fault desk publish them, and as a
# reader that needs every answer reads them: EVENT as deep as FAULT_COMMAND, so a burst of
# answers to a burst of commands is not pushed out of the writer's history before a reader has
# it (keep-last drops the oldest even when unacknowledged); late joiners get the recent history
FAULT_STATUS = _keep_last(1000, reliable=True, transient_local=True)
# lockstep acknowledgements as the peers publish them: every one is needed by the peers reading
# them (ego driver), also by a reader that matched a moment late (transient local keeps the
# recent ones). The dynamics node reads them volatile (LOCKSTEP_ACK_IN: matches any reliable
# writer).
LOCKSTEP_ACK = _keep_last(100, reliable=True, transient_local=True)
LOCKSTEP_ACK_IN = _keep_last(100, reliable=True)
# streams whose every sample counts when not paced by the wall clock: /clock in lockstep (the
# peers acknowledge every tick), the raw state in fast and lockstep (sensors sample each one);
# best-effort subscribers (rclpy's sim-time clock, tools) still match
RELIABLE_STREAM = _keep_last(100, reliable=True)


def clock(lockstep: bool) -> QoSProfile:
    """/clock as its owner offers it and as a reader that needs every tick reads it: in lockstep
    RELIABLE_STREAM (the peers acknowledge every tick, the recorder records each one); else
    STREAM (never holds the physics loop back)."""
    return RELIABLE_STREAM if lockstep else STREAM


# published once: static transforms, maps
LATCHED = _keep_last(1, reliable=True, transient_local=True)

# sensor outputs (imu/data, gnss/fix, gnss/velocity): REP-2003, drivers publish with the system
# default QoS (reliable, keep last 10), which reliable subscribers (Autoware's imu_corrector) and
# best-effort SensorDataQoS subscribers both match
SENSOR = _keep_last(10, reliable=True)
# /tf as tf2_ros's TransformBroadcaster offers it: reliable volatile keep-last 100
# (ros2/geometry2 tf2_ros/include/tf2_ros/qos.hpp, DynamicBroadcasterQoS)
TF = _keep_last(100, reliable=True)
# /tf_static as tf2_ros's StaticTransformBroadcaster: reliable, transient local, keep-last 1 per
# publisher, each message holding all of that publisher's static transforms (qos.hpp,
# StaticBroadcasterQoS); tf2 listeners read it with depth 100 transient local
TF_STATIC = LATCHED
# /diagnostics as diagnostic_updater publishes it (the default QoS: reliable keep-last 10)
DIAGNOSTICS = _keep_last(10, reliable=True)


def overridable() -> QoSOverridingOptions:
    """Options for ``create_publisher(..., qos_overriding_options=overridable())``: reliability,
    durability, history and depth can be overridden per topic (module docstring)."""
    return QoSOverridingOptions.with_default_policies()


def offered(profile: QoSProfile) -> OfferedQos:
    """An rclpy QoS profile in rosbag2's terms (enum names lower-cased are the rmw strings): what
    a recording's channel says its publishers offered (vehicle_sim.recording). A system default
    is written as the rmw reports it once the publisher exists (rclpy's duration 0: infinite;
    liveliness: automatic), so the engine's recordings and the recorder node's agree; history
    and depth stay the writer's own (the rmw reports them as unknown and 0)."""
    return OfferedQos(
        history=_rmw_name(profile.history, OfferedQos.history), depth=int(profile.depth),
        reliability=_rmw_name(profile.reliability, OfferedQos.reliability),
        durability=_rmw_name(profile.durability, OfferedQos.durability),
        deadline_ns=_rmw_ns(profile.deadline), lifespan_ns=_rmw_ns(profile.lifespan),
        liveliness=_rmw_name(profile.liveliness, OfferedQos.liveliness),
        liveliness_lease_duration_ns=_rmw_ns(profile.liveliness_lease_duration),
        avoid_ros_namespace_conventions=profile.avoid_ros_namespace_conventions)


def _rmw_name(policy: Enum, default: str) -> str:
    name = policy.name.lower()
    return default if name == "system_default" else name


def _rmw_ns(duration: Duration) -> int:
    return duration.nanoseconds or INFINITE_NS  # 0: unspecified, the DDS default is infinite
