"""The lockstep engine's recording (``record true``): every edge it publishes that the scenario's
recorder would record (RecorderParams.wanted, from the recorder node's declaration:
engine_setup.recorder_params) is also written, in the engine's process and thread, to an MCAP
file as it leaves, whether or not a reader is matched, so nothing is ever thinned (a recorder
process reading a 10x engine would lose messages from the writers' keep-last histories).

The file is the recorder node's (recording_writer.McapRecording): topics by their resolved names
(``/vehicle/state``) and types, each channel with the QoS the engine's publishers offer; edges
that are CDR bytes are written as they are, message edges as CDR with zeroed padding
(cdr_message: rmw's serialization leaves its padding unset, and a seed must repeat the file's
messages byte for byte; those bytes are what a recorded edge publishes too); the log time is the
simulated time [ns] the engine sent the message at (a message's stamp, but for a GNSS fix,
stamped at its measurement and sent at its release, latency later; latched messages at 0).
"""
from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from rclpy.node import Node

from vehicle_sim.nodes.cdr_message import cdr_bytes
from vehicle_sim.nodes.qos import offered
from vehicle_sim.nodes.reach import has_reader
from vehicle_sim.recording import OfferedQos, RecorderParams, offered_qos_yaml, ros2msg_schema

if TYPE_CHECKING:
    from vehicle_sim.recording_writer import McapRecording


def type_name(msg_type: type) -> str:
    """'pkg/msg/Type' of a generated message class (module pkg.msg._type)."""
    return f"{msg_type.__module__.split('.')[0]}/msg/{msg_type.__name__}"


class EdgeRecording:
    """The engine's MCAP file; ``add`` the publishers, ``write`` their messages, ``finish``
    once. What is written before ``start`` (the latched /tf_static of the node's set-up) is held
    until every publisher is added, so a channel offers the QoS of all of its publishers.
    Writes come from the engine's thread, ``finish`` from the node's: a lock orders them, and
    nothing is written after the finish (a frame still running at a stop)."""

    def __init__(self, node: Node, p: RecorderParams) -> None:
        self.p = p
        self._log = node.get_logger()
        self.file: McapRecording | None = None  # opened at start: a node that refuses to start
        # (exit 2) or is stopped while it is built leaves no file without its metadata
        self._topics: dict[str, tuple[str, str, list[OfferedQos]]] = {}  # type, schema, QoS
        self._lock = threading.Lock()
        self._held: list[tuple[str, int, bytes]] | None = []  # written before start()
        self._finished = False

    def add(self, pub) -> bool:
        """Record ``pub``'s topic when the recorder wants it (True); one more publisher of a
        recorded topic (/tf_static) adds its offered QoS."""
        topic, datatype = pub.topic_name, type_name(pub.msg_type)
        if topic in self._topics:
            self._topics[topic][2].append(offered(pub.qos_profile))
            return True
        if not self.p.wanted(topic, datatype):
            return False
        try:
            schema = ros2msg_schema(datatype)
        except FileNotFoundError as exc:
            self._log.warning(f"not recording {topic}: {exc}")
            return False
        self._topics[topic] = (datatype, schema, [offered(pub.qos_profile)])
        return True

    def write(self, topic: str, t_ns: int, data: bytes) -> None:
        """A message (CDR bytes) of a topic ``add`` accepted, logged at t_ns [ns]."""
        with self._lock:
            if self._held is not None:
                self._held.append((topic, t_ns, data))
            elif not self._finished:
                self._add_message(topic, t_ns, data)

    def start(self) -> None:
        """Every publisher is added: what was held goes to the file, the rest as it comes."""
        with self._lock:
            if self.file is None:
                from vehicle_sim.recording_writer import McapRecording  # mcap: only if recording
                self.file = McapRecording(self.p.record_dir, self.p.map_file,
                                          "vehicle_sim engine", self.p.vehicle_file)
            held, self._held = self._held or [], None
            for message in held:
                self._add_message(*message)

    def _add_message(self, topic: str, t_ns: int, data: bytes) -> None:
        if self.file.failure:  # said once: the run goes on unrecorded
            return
        if not self.file.has_channel(topic):  # at its first message, as the recorder's
            datatype, schema, profiles = self._topics[topic]
            self.file.add_channel(topic, datatype, schema, offered_qos_yaml(profiles))
        self.file.add_message(topic, t_ns, data)
        failure = self.file.new_failure()
        if failure:  # the run goes on, unrecorded
            self._log.error(failure)

    def finish(self) -> str:
        """The file closed; a line that says what it holds."""
        self.start()
        with self._lock:
            self._finished = True
            self.file.finish()
        if self.file.failure:
            return f"recording cut short: {self.file.failure}"
        return (f"recorded {self.file.message_count} messages on {len(self.file.counts)} "
                f"topics to {self.file.path}")


class Edge:
    """A publisher of the engine's edges: a message goes to its matched readers (to every one
    that may come, ``latched``: transient-local events and static transforms) and, when its
    topic is recorded, to the recording."""

    def __init__(self, pub, recording: EdgeRecording | None, latched: bool = False) -> None:
        self.pub, self.topic, self.latched = pub, pub.topic_name, latched
        self.recording = recording if recording is not None and recording.add(pub) else None
        self._read = False  # a reader was matched at the last wanted()

    def wanted(self) -> bool:
        """A message is worth building: a reader is matched or the topic is recorded (the
        reader is remembered for the ``send`` that follows, in the same thread)."""
        self._read = has_reader(self.pub)
        return self._read or self.recording is not None

    def send(self, t_ns: int, message) -> None:
        """``message`` (a message or its CDR bytes) of simulated time t_ns [ns]."""
        if self.recording is not None and not isinstance(message, bytes):
            message = cdr_bytes(message)
        if self._read or self.latched:
            self.pub.publish(message)
        if self.recording is not None:
            self.recording.write(self.topic, t_ns, message)
