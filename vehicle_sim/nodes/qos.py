"""QoS by role (conventions.md): streams best-effort keep-last-1, events reliable."""
from rclpy.qos import (DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy)

# high-rate state, IMU, platform streams and /clock: never block the publisher
STREAM = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1,
                    reliability=ReliabilityPolicy.BEST_EFFORT,
                    durability=DurabilityPolicy.VOLATILE)
# state at a moderate rate that tools (RViz, rosbag, stacks) subscribe to with the default QoS
STATE = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=10,
                   reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE)
# large arrays at a moderate rate (traffic agents: ~120 B per agent, 600 kB at 5000 agents):
# best effort loses whole fragmented samples, reliable keep-last-1 delivers the newest
LARGE_STREAM = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1,
                          reliability=ReliabilityPolicy.RELIABLE,
                          durability=DurabilityPolicy.VOLATILE)
# commands from stacks and rigs: reliable, only the newest matters
COMMAND = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1,
                     reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE)
# collisions, faults, status changes: reliable, late joiners get the recent history
EVENT = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=100,
                   reliability=ReliabilityPolicy.RELIABLE,
                   durability=DurabilityPolicy.TRANSIENT_LOCAL)
# fault commands as read by the nodes owning a fault target: reliable + volatile, so it matches
# both EVENT (transient-local) and COMMAND publishers; a restarted node starts without faults,
# like power-cycled hardware
FAULT_COMMAND = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=100,
                           reliability=ReliabilityPolicy.RELIABLE,
                           durability=DurabilityPolicy.VOLATILE)
# published once: static transforms, maps
LATCHED = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1,
                     reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)
