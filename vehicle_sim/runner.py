"""vehicle_sim_run: start a scenario's node graph without launch_ros.

Reads the same declaration as launch/urban.launch.py (vehicle_sim.graph) and starts the same
executables with the same arguments as plain subprocesses: `--ros-args -r __node:=<name>
--params-file <file> -p <arg>:=<value> -r <from>:=<to>`; the nodes that share a `process` run in
one vehicle_sim_compose process with such a section each. It prefixes their output, forwards
Ctrl-C, respawns nodes that ask for it, and ends the run (all nodes, cleanly) when a node that is
not respawned exits, or any node refuses its configuration (exit 2, never respawned: it would
refuse again; the runner exits 2 too). DDS stays on loopback unless --discovery_range says
otherwise.

On a terminal it shows one progress line (simulated time, RTF, agents, accidents); `--headless
false` also starts rviz2 with config/rviz/urban.rviz, or refuses (exit 2) where rviz2 is not
installed; a recorded run (`--record true`) ends with vehicle_sim_report next to the recording.
"""
from __future__ import annotations

import argparse
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from vehicle_sim import graph, ros_distro
from vehicle_sim.core.config import ConfigError
from vehicle_sim.core.parent_death import die_with_parent
from vehicle_sim.core.ros_yaml import yaml_text
from vehicle_sim.engine_setup import engine_params
from vehicle_sim.paths import config_path, executable
from vehicle_sim.progress import (
    PROGRESS_ENV,
    PROGRESS_MARK,
    ProgressLine,
    on_terminal,
    parse_progress,
)
from vehicle_sim.scenario_check import check_one_world

STOP_GRACE_S = 10.0  # SIGINT, then SIGTERM after this, then SIGKILL
REFUSED = 2  # a node's (and the runner's) exit code for a configuration it refuses
# a node's line naming the file it records to (nodes.recorder_node, nodes.engine_node)
# (whatever the log format adds after the message: a colour reset, the caller)
RECORDING_LINE = re.compile(r"recording to (.+?\.mcap)(?=\s|\x1b|$)")
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)  # end the run


@dataclass
class Child:
    spec: graph.NodeSpec | graph.Process  # its name, respawn and shutdown_on_exit
    command: list[str]
    proc: subprocess.Popen | None = None
    respawns: int = 0
    exit_code: int | None = None
    restart_at: float | None = None
    readers: list[threading.Thread] = field(default_factory=list)


def node_command(spec: graph.NodeSpec, args: dict[str, str],
                 scenario: graph.Scenario | None = None) -> list[str]:
    return [str(program(spec.executable)), *graph.ros_arguments(spec, args, scenario)]


def process_command(process: graph.Process, args: dict[str, str],
                    scenario: graph.Scenario | None = None) -> list[str]:
    """A node's own command, or vehicle_sim_compose with a section per node."""
    if not process.composed:
        return node_command(process.nodes[0], args, scenario)
    return [str(executable(graph.COMPOSE_EXECUTABLE)),
            *graph.compose_arguments(process, args, scenario)]


def program(name: str) -> Path:
    """A vehicle_sim node executable, else (allowed by --foreign_executables only, which
    load_scenario checked) an absolute path or a program on PATH."""
    if name in graph.NODE_EXECUTABLES:
        return executable(name)
    found = name if os.path.isabs(name) else shutil.which(name)
    if found is None or not os.access(found, os.X_OK):
        raise FileNotFoundError(f"executable {name!r} not found")
    return Path(found)


def ros_environment(args: dict[str, str], domain_id: int | None) -> dict[str, str]:
    env = dict(os.environ)
    env.update(graph.dds_environment(args["discovery_range"], env))
    if domain_id is not None:
        env["ROS_DOMAIN_ID"] = str(domain_id)
    env.setdefault("ROS_DOMAIN_ID", str(1 + os.getpid() % 100))
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env


RVIZ_CONFIG = "rviz/urban.rviz"
VIEWERS = ("rviz2", "map_to_odom", "live_view")  # their exit codes do not fail the run


def live_child(args: dict[str, str], host: str, port: int,
               vehicle_file: Path | None) -> Child | None:
    """vehicle_sim_live (the Foxglove WebSocket view, vehicle_sim.live) on host:port, drawing
    the ego of ``vehicle_file`` (check_one_world's; None: no node has an ego file, the view's
    default); None when foxglove-sdk is not installed."""
    import importlib.util
    if importlib.util.find_spec("foxglove") is None:
        return None
    ego = [] if vehicle_file is None else ["-p", f"vehicle_file:={yaml_text(str(vehicle_file))}"]
    return Child(graph.NodeSpec(name="live_view", executable="vehicle_sim_live",
                                shutdown_on_exit=False),
                 [str(executable("vehicle_sim_live")), "--ros-args", "-r", "__node:=live_view",
                  "-p", f"use_sim_time:={args['use_sim_time']}", "-p", f"host:={host}",
                  "-p", f"port:={port}", *ego])


def viewer_children(args: dict[str, str]) -> list[Child]:
    """rviz2 with the shipped configuration and, with `ros2` on PATH, the identity map -> odom
    transform its fixed frame needs (traffic/node_params.py: map is odom); closing them does
    not end the run. Empty when rviz2 is not installed."""
    found = shutil.which("rviz2")
    if found is None:
        return []
    sim_time = ["--ros-args", "-p", f"use_sim_time:={args['use_sim_time']}"]
    children = [Child(graph.NodeSpec(name="rviz2", executable="rviz2", shutdown_on_exit=False),
                      [found, "-d", str(config_path(RVIZ_CONFIG)), *sim_time])]
    ros2 = shutil.which("ros2")
    if ros2 is not None:
        children.append(Child(
            graph.NodeSpec(name="map_to_odom", executable="ros2", shutdown_on_exit=False),
            [ros2, "run", "tf2_ros", "static_transform_publisher", "--frame-id", "map",
             "--child-frame-id", "odom", *sim_time]))
    return children


class Runner:
    def __init__(self, children: list[Child], env: dict[str, str],
                 progress: ProgressLine | None = None):
        self.children, self.env, self.progress = children, env, progress
        self._lock = threading.Lock()
        self.output_closed = False  # our stdout's reader went away (`| head`): the run ends
        self.stopped_by: list[int] = []  # the signals that stopped the run, first first
        self.recordings: list[Path] = []  # the MCAP files the nodes said they write
        self._stdout_errors = select.poll()  # POLLERR on a pipe whose reader is gone, before
        self._stdout_errors.register(sys.stdout.fileno(), 0)  # any write (a quiet graph)

    def start(self, child: Child) -> None:
        runner_pid = os.getpid()
        # in a session of its own (a terminal's Ctrl-C reaches the runner alone, which stops
        # the nodes in order), and ended as by Ctrl-C when the runner ends however it ends
        # (SIGKILL, a closed terminal): no node outlives its run
        child.proc = subprocess.Popen(child.command, env=self.env, stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, start_new_session=True,
                                      text=True, bufsize=1,
                                      preexec_fn=lambda: die_with_parent(runner_pid,
                                                                         signal.SIGINT))
        child.exit_code, child.restart_at = None, None
        reader = threading.Thread(target=self._pump, args=(child.spec.name, child.proc),
                                  daemon=True)
        reader.start()
        child.readers.append(reader)

    def _pump(self, name: str, proc: subprocess.Popen) -> None:
        for line in proc.stdout:
            written = RECORDING_LINE.search(line)
            if written:  # this run's own file (another run may write in the same folder)
                self.recordings.append(Path(written.group(1)))
            with self._lock:
                if line.startswith(PROGRESS_MARK):
                    status = parse_progress(line)
                    if self.progress is not None and status is not None:
                        self.progress.update(status)
                elif self.progress is not None:
                    self.progress.write(f"[{name}] {line}")
                else:
                    self._emit(f"[{name}] {line}")

    def _emit(self, text: str) -> None:
        """One line to stdout; once its reader is gone, every later line goes nowhere (the
        children's output is still read, so no child blocks on a full pipe)."""
        try:
            sys.stdout.write(text)
            sys.stdout.flush()
        except BrokenPipeError:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            self.output_closed = True

    def supervise(self, stop: threading.Event, timeout_s: float) -> str:
        """Run until Ctrl-C, a node ends the run, or the wall timeout; return the reason."""
        deadline = time.monotonic() + timeout_s if timeout_s > 0 else None
        while not stop.wait(0.1):
            if deadline is not None and time.monotonic() > deadline:
                return f"wall-clock timeout of {timeout_s:g} s"
            if self.output_closed or self._stdout_errors.poll(0):
                self.output_closed = True
                return "standard output closed"
            for child in self.children:
                reason = self._check(child)
                if reason:
                    return reason
        by = self.stopped_by[0] if self.stopped_by else signal.SIGINT
        return "interrupted (Ctrl-C)" if by == signal.SIGINT else \
            f"interrupted ({signal.Signals(by).name})"

    def _check(self, child: Child) -> str:
        now = time.monotonic()
        if child.restart_at is not None and now >= child.restart_at:
            child.respawns += 1
            self.start(child)
            return ""
        if child.proc is None or child.restart_at is not None or child.proc.poll() is None:
            return ""
        child.exit_code = child.proc.returncode
        if child.exit_code == REFUSED and child.spec.name not in VIEWERS:  # its configuration:
            # a respawn would refuse it again (a viewer's exit 2, a port taken, ends nothing)
            return (f"{child.spec.name} exited {REFUSED}, refusing its configuration "
                    "(its line above)")
        if child.spec.respawn:
            self._say(f"{child.spec.name} exited with {child.exit_code}; respawning in "
                      f"{child.spec.respawn_delay_s:g} s")
            child.restart_at = now + child.spec.respawn_delay_s
            return ""
        if child.spec.shutdown_on_exit:
            return f"{child.spec.name} exited with code {child.exit_code}"
        return ""

    def stop_all(self) -> None:
        running = [c for c in self.children if c.proc is not None and c.proc.poll() is None]
        for child in running:
            child.proc.send_signal(signal.SIGINT)
        deadline = time.monotonic() + STOP_GRACE_S
        for sig in (signal.SIGTERM, signal.SIGKILL):
            for child in running:
                try:
                    child.proc.wait(timeout=max(0.0, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    self._say(f"{child.spec.name} did not stop; sending {sig.name}")
                    if sig == signal.SIGTERM:  # its stacks first (nodes.main: faulthandler)
                        child.proc.send_signal(signal.SIGUSR1)
                        time.sleep(0.2)
                    child.proc.send_signal(sig)
            deadline = time.monotonic() + 3.0
        for child in self.children:
            if child.proc is not None:
                child.proc.wait()
                child.exit_code = child.proc.returncode
            for reader in child.readers:
                reader.join(timeout=2.0)

    def _say(self, text: str) -> None:
        with self._lock:
            if self.progress is not None:
                self.progress.write(f"[vehicle_sim_run] {text}")
            else:
                self._emit(f"[vehicle_sim_run] {text}\n")

    def end_progress(self) -> None:
        with self._lock:
            if self.progress is not None:
                self.progress.close()
                self.progress = None


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="vehicle_sim_run", description=__doc__.split("\n")[0])
    for arg in graph.LAUNCH_ARGS:
        parser.add_argument(f"--{arg.name}", default=None, choices=arg.choices or None,
                            help=f"{arg.description} (default {arg.default})")
    parser.add_argument("--domain_id", type=int, default=None,
                        help="ROS_DOMAIN_ID (default: the environment's, else one per run)")
    parser.add_argument("--timeout", type=float, default=0.0,
                        help="wall-clock limit [s] of the whole run, 0 = none")
    parser.add_argument("--live", default="false", choices=("true", "false"),
                        help="also start the Foxglove WebSocket live view (vehicle_sim_live)")
    parser.add_argument("--live_host", default="127.0.0.1",
                        help="address of the live view (default loopback: this machine only)")
    parser.add_argument("--live_port", type=int, default=8765, help="port of the live view")
    parser.add_argument("--foreign_executables", action="store_true",
                        help="let the scenario start programs that are not vehicle_sim nodes "
                             "(an absolute path, or a name on PATH)")
    rest = [a for a in (argv if argv is not None else sys.argv[1:])]
    launch_style = [a for a in rest if ":=" in a and not a.startswith("-")]
    options = parser.parse_args([a for a in rest if a not in launch_style])
    for item in launch_style:  # also accept `name:=value` like ros2 launch
        name, value = item.split(":=", 1)
        if getattr(options, name, "missing") == "missing" or name in ("domain_id", "timeout",
                                                                      "live_port"):
            parser.error(f"unknown launch argument {name!r}")
        setattr(options, name, value)
    return options


def main(argv: list[str] | None = None) -> int:
    options = parse(argv)
    given = {a.name: getattr(options, a.name) for a in graph.LAUNCH_ARGS
             if getattr(options, a.name) is not None}
    try:
        args = graph.resolve_args(given)
        scenario = graph.load_scenario(args["scenario"], options.foreign_executables)
        world = check_one_world(scenario, args)  # one ego vehicle file and one map in every node
        children = [Child(process, process_command(process, args, scenario))
                    for process in graph.processes(scenario, args)]
        if args["engine"] == "true":  # what the engine cannot run is refused before it starts
            engine_params(scenario, args)
        if args["record_dir"]:  # the summary goes there, not only recordings ('' = none)
            check_writable(Path(args["record_dir"]))
    except (ConfigError, FileNotFoundError) as exc:
        print(f"vehicle_sim_run: {exc}", file=sys.stderr)
        return REFUSED
    if args["headless"] == "false":
        viewers = viewer_children(args)
        if not viewers:
            print("vehicle_sim_run: --headless false needs rviz2, which is not installed "
                  "(install ROS 2 rviz2, or run headless)", file=sys.stderr)
            return 2
        children += viewers
    if options.live == "true":
        live = live_child(args, options.live_host, options.live_port,
                          world["ego vehicle file"])
        if live is None:
            print("vehicle_sim_run: --live true needs foxglove-sdk, which is not installed "
                  "(pip install 'vehicle_sim[live]')", file=sys.stderr)
            return 2
        children.append(live)
    env = ros_environment(args, options.domain_id)
    progress = None
    if on_terminal():
        env[PROGRESS_ENV] = "1"
        progress = ProgressLine(float(args["duration"]) if _finite(args["duration"]) else 0.0)
    runner = Runner(children, env, progress)
    loopback = any(graph.LOOPBACK_PROFILE in env.get(var, "")
                   for var in ros_distro.PROFILE_VARIABLES)
    runner._say(f"scenario {args['scenario']}: {scenario.description}; ROS_DOMAIN_ID="
                f"{env['ROS_DOMAIN_ID']}, discovery {args['discovery_range']}"
                f"{' (loopback-only DDS profile)' if loopback else ''}")
    stop = threading.Event()
    for sig in STOP_SIGNALS:  # (SIGHUP: the terminal closed, an ssh session dropped)
        signal.signal(sig, lambda signum, _: (runner.stopped_by.append(signum), stop.set()))
    try:
        for child in children:
            runner.start(child)
        reason = runner.supervise(stop, options.timeout)
        runner._say(f"stopping: {reason}")
    finally:  # whatever ends the runner ends its nodes: they run in sessions of their own
        runner.stop_all()
    runner.end_progress()
    runner._emit(report(children, reason) + "\n")
    if args["record"] == "true":
        report_recording(runner.recordings, runner._say)
    failed = [c for c in children
              if c.spec.name not in VIEWERS and c.exit_code not in (0, -signal.SIGINT)]
    if any(c.exit_code == REFUSED for c in failed):  # (viewers are not in failed)
        return REFUSED
    return 1 if failed or "timeout" in reason else 0


def check_writable(folder: Path) -> None:
    """``folder`` exists (made here, as the run would) and this user may write in it; else a
    ConfigError naming it (the run would lose its summary at the end, after all its work)."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError("--record_dir", str(folder), f"cannot be made ({exc.strerror})") from exc
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ConfigError("--record_dir", str(folder), "is not writable by this user")


def _finite(text: str) -> bool:
    try:
        return 0.0 <= float(text) < float("inf")
    except ValueError:
        return False


def report_recording(recordings: list[Path], say: Callable[[str], None]) -> None:
    """vehicle_sim_report on the recording this run wrote (the last file a node of the run
    said it records to: not the newest in the folder, which may be another run's); a report
    that cannot be made is one line, never the run's failure."""
    existing = [p for p in recordings if p.is_file()]
    if not existing:
        say("no recording found for the report")
        return
    from vehicle_sim.report.cli import write_report  # matplotlib: only for recorded runs
    recording = existing[-1]
    try:
        files = write_report(recording, recording.parent)
    except ValueError as exc:
        say(f"no report: {exc}")
        return
    say(f"report: {files['summary']} and {len(files) - 1} plots")


def report(children: list[Child], reason: str) -> str:
    lines = ["==== vehicle_sim_run: processes ====", f"{'ended because':>22}: {reason}"]
    for c in children:
        nodes = getattr(c.spec, "nodes", ())  # a composed process: its nodes too
        members = f" ({', '.join(n.name for n in nodes)})" if len(nodes) > 1 else ""
        lines.append(f"{c.spec.name:>22}: exit {c.exit_code}, respawned {c.respawns}x{members}")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
