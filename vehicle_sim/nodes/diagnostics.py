"""``/diagnostics`` (diagnostic_msgs/DiagnosticArray) of the nodes, once per simulated second.

One small helper the nodes share: ``Diagnostics(node, hardware_id)`` publishes a list of
``Check`` (name, level, message, key-values) when ``due(t_ns)`` says a new simulated second has
begun, stamped with that simulation time. The level rules are plain functions:

- ``loop_check``: the physics loop (dynamics node) from its LoopStatus: ERROR when the physics
  diverged; WARN for new overruns, an achieved real-time factor below 90 % of the target in
  realtime mode (a choice: a 10 % shortfall is what a user notices as a slow run; diagnostic
  aggregators only need a threshold), or the command watchdog braking; else OK.
- ``faults_check``: a sensor's (or the vehicle's) active injected faults: ERROR while one makes
  the output absent or invalid (dropout, freeze, no fix), WARN while one degrades it (bias step,
  noise scale, position jump), OK with none.
- ``link_check``: a device link (bridge): ERROR when down, OK when up or not configured ("off"),
  with its source.
- ``source_check``: the bridge's active command source: WARN for "none" (no fresh command from a
  stack or the rig: a silent link), else OK naming the source.

Levels are diagnostic_msgs' OK 0, WARN 1, ERROR 2 (DiagnosticStatus.msg). Without
diagnostic_msgs (a ROS workspace that lacks it): one log line and no diagnostics.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from rclpy.node import Node

from vehicle_sim.core.sim_loop import LoopStatus, SimLoop
from vehicle_sim.nodes import qos
from vehicle_sim.nodes.conversions import sec_nanosec, stamp

OK, WARN, ERROR = 0, 1, 2
RTF_WARN_FRACTION = 0.9  # achieved / target real-time factor below this: WARN (a choice, above)
# ERROR: the output is absent or stale, or the vehicle no longer obeys its commands
_FAILING_KINDS = ("dropout", "freeze", "no_fix", "brake_failure", "steering_stuck", "engine_cut",
                  "tyre_blowout")


@dataclass(frozen=True)
class Check:
    """One DiagnosticStatus: ``name`` (e.g. "vehicle_sim: physics loop"), level, message."""

    name: str
    level: int
    message: str
    values: dict[str, str] = field(default_factory=dict)


def loop_check(s: LoopStatus, *, mode: str, target_rtf: float, new_overruns: int,
               diverged: str = "") -> Check:
    values = {"mode": mode, "sim_time_s": f"{s.sim_time_s:.3f}", "steps": str(s.steps),
              "overruns": str(s.overruns), "real_time_factor": f"{s.real_time_factor:.3f}",
              "lateness_p99_s": f"{s.lateness_s[1]:.6f}",
              "lateness_max_s": f"{s.lateness_s[2]:.6f}",
              "step_compute_p99_s": f"{s.compute_p99_s:.6f}", "paused": str(s.paused),
              "command_timeout": str(s.command_timeout)}
    name = "vehicle_sim: physics loop"
    if diverged:
        return Check(name, ERROR, f"physics stopped: {diverged}", values)
    problems = []
    if new_overruns > 0:
        problems.append(f"{new_overruns} overruns")
    if (mode == "realtime" and not s.paused and s.real_time_factor > 0.0
            and s.real_time_factor < RTF_WARN_FRACTION * target_rtf):
        problems.append(f"real-time factor {s.real_time_factor:.2f} below target {target_rtf:g}")
    if s.command_timeout:
        problems.append("no command: watchdog braking")
    if problems:
        return Check(name, WARN, "; ".join(problems), values)
    return Check(name, OK, "paused" if s.paused else "running", values)


def faults_check(name: str, kinds: list[str]) -> Check:
    """``kinds``: the active faults' kinds (lower case, FaultCommand constant names)."""
    values = {"active_faults": str(len(kinds)), "kinds": ", ".join(kinds)}
    if not kinds:
        return Check(name, OK, "no active faults", values)
    failing = [k for k in kinds if k in _FAILING_KINDS]
    level = ERROR if failing else WARN
    return Check(name, level, f"injected fault{'s' if len(kinds) > 1 else ''}: "
                 f"{', '.join(kinds)}", values)


def link_check(name: str, up: bool, source: str, extra: dict[str, str] | None = None) -> Check:
    values = {"link": "up" if up else "down", "source": source, **(extra or {})}
    if source == "off":
        return Check(name, OK, "not configured", values)
    return Check(name, OK if up else ERROR, f"{source} link {'up' if up else 'down'}", values)


def source_check(source: str) -> Check:
    name = "vehicle_sim: command source"
    if source in ("", "none"):
        return Check(name, WARN, "no fresh command from a stack or the rig", {"source": "none"})
    return Check(name, OK, f"driven by {source}", {"source": source})


class Diagnostics:
    """Publishes Checks on /diagnostics once per simulated second (``enabled`` False without
    diagnostic_msgs)."""

    def __init__(self, node: Node, hardware_id: str):
        self.hardware_id = hardware_id
        self._second = -1
        self.enabled = False
        try:
            from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
        except ImportError:
            node.get_logger().info("diagnostic_msgs not installed: no /diagnostics")
            return
        self._types = DiagnosticArray, DiagnosticStatus, KeyValue
        self._pub = node.create_publisher(DiagnosticArray, "/diagnostics", qos.DIAGNOSTICS)
        self.enabled = True

    def due(self, t_ns: int) -> bool:
        """True once per simulated second (the first call too); a restart (time going back)
        starts again."""
        second = sec_nanosec(t_ns)[0]
        if second == self._second:
            return False
        self._second = second
        return True

    def publish(self, t_ns: int, checks: list[Check]) -> None:
        if not self.enabled:
            return
        array_t, status_t, kv_t = self._types
        msg = array_t(status=[status_t(level=bytes([c.level]), name=c.name, message=c.message,
                                       hardware_id=self.hardware_id,
                                       values=[kv_t(key=k, value=v) for k, v in c.values.items()])
                              for c in checks])
        msg.header.stamp = stamp(t_ns)
        self._pub.publish(msg)


class LoopDiagnostics:
    """The dynamics node's reports: the physics loop and the vehicle's injected faults, once per
    simulated second from the physics thread; sim time and steps as of the report, real-time
    factor and lateness as of the last SimStatus (``status``, set by the node's status hook)."""

    def __init__(self, node: Node, loop: SimLoop):
        self.node, self.loop = node, loop
        self.out = Diagnostics(node, node.get_name())
        self.status: LoopStatus | None = None
        self._overruns_reported = 0

    def after_step(self, t_ns: int) -> None:
        if self.out.due(t_ns):
            self.publish(t_ns)

    def publish(self, t_ns: int, diverged: str = "") -> None:
        if self.status is None:
            return
        p = self.node.p
        s = dataclasses.replace(self.status, sim_time_s=t_ns * 1e-9, steps=self.loop.k)
        checks = [loop_check(s, mode=p.mode, target_rtf=p.real_time_factor,
                             new_overruns=s.overruns - self._overruns_reported, diverged=diverged),
                  faults_check("vehicle_sim: vehicle faults",
                               self.loop.active_fault_kinds())]
        self._overruns_reported = s.overruns
        self.out.publish(t_ns, checks)
