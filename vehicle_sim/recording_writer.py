"""One rosbag2-compatible MCAP recording (vehicle_sim/recording.py says what makes it one),
written by the recorder node from the messages it receives and by the lockstep engine from its
own edges (nodes.edge_recording). No rclpy.

The file is ``vehicle_sim-<local time>.mcap`` in the record folder (``-<pid>`` added when a
run started in the same second has that name). A topic's schema and channel
are registered at its first message, the channel with its publishers' offered QoS (the
``offered_qos_profiles`` YAML, recording.offered_qos_yaml); messages are serialized CDR as given,
with the log time the writer passes [ns] (sim time) as log and publish time and a sequence
number per topic. ``finish`` writes the rosbag2 metadata (``ros2 bag info/play``) and the run's
map and ego vehicle file (record ``vehicle_sim``, keys ``map_file`` and ``vehicle_file``, for
vehicle_sim_report).
"""
from __future__ import annotations

import os
import time
from pathlib import Path

from mcap.writer import Writer

from vehicle_sim.recording import RecordedTopic, bag_metadata_yaml
from vehicle_sim.ros_distro import ros_distro


class McapRecording:
    """An open MCAP file: ``add_channel`` once per topic, then ``add_message``; ``finish``."""

    def __init__(self, record_dir: str, map_file: str, library: str,
                 vehicle_file: str = "") -> None:
        """``map_file`` and ``vehicle_file`` (the ego's): the run's, written to the metadata
        (record ``vehicle_sim``) for vehicle_sim_report."""
        out = Path(record_dir)
        out.mkdir(parents=True, exist_ok=True)
        stem = f"vehicle_sim-{time.strftime('%Y%m%d-%H%M%S')}"
        self.path = out / f"{stem}.mcap"
        try:  # never over another run's file (two runs started in one second, one folder)
            self._file = open(self.path, "xb")
        except FileExistsError:
            self.path = out / f"{stem}-{os.getpid()}.mcap"
            self._file = open(self.path, "xb")
        self.map_file, self.vehicle_file = map_file, vehicle_file
        self._writer = Writer(self._file)
        self._writer.start(profile="ros2", library=library)
        self._schemas: dict[str, int] = {}  # datatype -> schema id
        self._channels: dict[str, int] = {}  # topic -> channel id
        self._topics: dict[str, tuple[str, str]] = {}  # topic -> (datatype, offered QoS YAML)
        self.counts: dict[str, int] = {}  # messages written per topic
        self._first_ns: int | None = None
        self._last_ns = 0
        # why the file stopped taking messages (a full disk, an I/O error): then every call
        # does nothing, and the caller says it once (new_failure)
        self.failure = ""
        self._failure_said = False

    def has_channel(self, topic: str) -> bool:
        return topic in self._channels

    def new_failure(self) -> str:
        """The failure's line the first time it is asked for after the failure, else ''."""
        if not self.failure or self._failure_said:
            return ""
        self._failure_said = True
        return self.failure

    def _fail(self, exc: OSError, t_ns: int) -> None:
        """Stop taking messages: the file keeps what was written (readable up to its last
        complete chunk, vehicle_sim_report says it is cut short)."""
        self.failure = (f"{self.path}: {exc.strerror or exc}; recording stopped at "
                        f"t={t_ns * 1e-9:.3f} s after {self.message_count} messages")
        try:
            self._file.close()
        except OSError:
            pass

    def add_channel(self, topic: str, datatype: str, schema: str, qos_yaml: str) -> None:
        """The channel of ``topic`` (type 'pkg/msg/Type' with its ros2msg ``schema`` text,
        recording.ros2msg_schema), offered with the QoS of ``qos_yaml``."""
        if self.failure:
            return
        try:
            self._add_channel(topic, datatype, schema, qos_yaml)
        except OSError as exc:
            self._fail(exc, self._last_ns)

    def _add_channel(self, topic: str, datatype: str, schema: str, qos_yaml: str) -> None:
        if datatype not in self._schemas:
            self._schemas[datatype] = self._writer.register_schema(
                name=datatype, encoding="ros2msg", data=schema.encode())
        self._channels[topic] = self._writer.register_channel(
            topic=topic, message_encoding="cdr", schema_id=self._schemas[datatype],
            metadata={"offered_qos_profiles": qos_yaml, "topic_type_hash": ""})
        self._topics[topic] = (datatype, qos_yaml)
        self.counts[topic] = 0

    def add_message(self, topic: str, log_time_ns: int, data: bytes) -> None:
        """One serialized message of a topic whose channel is added, logged at log_time_ns."""
        if self.failure:
            return
        self._first_ns = (log_time_ns if self._first_ns is None
                          else min(self._first_ns, log_time_ns))
        self._last_ns = max(self._last_ns, log_time_ns)
        try:
            self._writer.add_message(channel_id=self._channels[topic], log_time=log_time_ns,
                                     data=data, publish_time=log_time_ns,
                                     sequence=self.counts[topic])
        except OSError as exc:
            self._fail(exc, log_time_ns)
            return
        self.counts[topic] += 1

    def finish(self) -> None:
        """The metadata, the MCAP summary, and the file closed (nothing after a failure)."""
        if self.failure:
            return
        try:
            self._finish()
        except OSError as exc:
            self._fail(exc, self._last_ns)

    def _finish(self) -> None:
        topics = [RecordedTopic(t, *self._topics[t], n) for t, n in self.counts.items()]
        distro = ros_distro(os.environ)
        self._writer.add_metadata("rosbag2", {
            "serialized_metadata": bag_metadata_yaml(topics, self._first_ns or 0, self._last_ns,
                                                     self.path.name, distro),
            "ROS_DISTRO": distro})
        self._writer.add_metadata("vehicle_sim", {"map_file": self.map_file,
                                                  "vehicle_file": self.vehicle_file})
        self._writer.finish()
        self._file.close()

    @property
    def message_count(self) -> int:
        return sum(self.counts.values())
