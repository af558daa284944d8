"""vehicle_sim_run: start a scenario's node graph without launch_ros.

Reads the same declaration as launch/urban.launch.py (vehicle_sim.graph) and starts the same
executables with the same arguments as plain subprocesses: `--ros-args -r __node:=<name>
--params-file <file> -p <arg>:=<value> -r <from>:=<to>`. It prefixes their output, forwards
Ctrl-C, respawns nodes that ask for it, and ends the run (all nodes, cleanly) when a node that is
not respawned exits. DDS stays on loopback unless --discovery_range says otherwise.
"""
from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from vehicle_sim import graph
from vehicle_sim.core.config import ConfigError
from vehicle_sim.paths import executable

STOP_GRACE_S = 10.0  # SIGINT, then SIGTERM after this, then SIGKILL


@dataclass
class Child:
    spec: graph.NodeSpec
    command: list[str]
    proc: subprocess.Popen | None = None
    respawns: int = 0
    exit_code: int | None = None
    restart_at: float | None = None
    readers: list[threading.Thread] = field(default_factory=list)


def node_command(spec: graph.NodeSpec, args: dict[str, str],
                 scenario: graph.Scenario | None = None) -> list[str]:
    cmd = [str(program(spec.executable)), "--ros-args", "-r", f"__node:={spec.name}"]
    params = graph.params_file(spec)
    if params is not None:
        cmd += ["--params-file", str(params)]
    for name, value in graph.node_parameters(spec, args, scenario).items():
        cmd += ["-p", f"{name}:={graph.yaml_text(value)}"]
    for remap in spec.remappings:
        cmd += ["-r", remap]
    return cmd


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


class Runner:
    def __init__(self, children: list[Child], env: dict[str, str]):
        self.children, self.env = children, env
        self._lock = threading.Lock()

    def start(self, child: Child) -> None:
        child.proc = subprocess.Popen(child.command, env=self.env, stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, start_new_session=True,
                                      text=True, bufsize=1)
        child.exit_code, child.restart_at = None, None
        reader = threading.Thread(target=self._pump, args=(child.spec.name, child.proc),
                                  daemon=True)
        reader.start()
        child.readers.append(reader)

    def _pump(self, name: str, proc: subprocess.Popen) -> None:
        for line in proc.stdout:
            with self._lock:
                sys.stdout.write(f"[{name}] {line}")
                sys.stdout.flush()

    def supervise(self, stop: threading.Event, timeout_s: float) -> str:
        """Run until Ctrl-C, a node ends the run, or the wall timeout; return the reason."""
        deadline = time.monotonic() + timeout_s if timeout_s > 0 else None
        while not stop.wait(0.1):
            if deadline is not None and time.monotonic() > deadline:
                return f"wall-clock timeout of {timeout_s:g} s"
            for child in self.children:
                reason = self._check(child)
                if reason:
                    return reason
        return "interrupted (Ctrl-C)"

    def _check(self, child: Child) -> str:
        now = time.monotonic()
        if child.restart_at is not None and now >= child.restart_at:
            child.respawns += 1
            self.start(child)
            return ""
        if child.proc is None or child.restart_at is not None or child.proc.poll() is None:
            return ""
        child.exit_code = child.proc.returncode
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
            print(f"[vehicle_sim_run] {text}", flush=True)


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="vehicle_sim_run", description=__doc__.split("\n")[0])
    for arg in graph.LAUNCH_ARGS:
        parser.add_argument(f"--{arg.name}", default=None, choices=arg.choices or None,
                            help=f"{arg.description} (default {arg.default})")
    parser.add_argument("--domain_id", type=int, default=None,
                        help="ROS_DOMAIN_ID (default: the environment's, else one per run)")
    parser.add_argument("--timeout", type=float, default=0.0,
                        help="wall-clock limit [s] of the whole run, 0 = none")
    parser.add_argument("--foreign_executables", action="store_true",
                        help="let the scenario start programs that are not vehicle_sim nodes "
                             "(an absolute path, or a name on PATH)")
    rest = [a for a in (argv if argv is not None else sys.argv[1:])]
    launch_style = [a for a in rest if ":=" in a and not a.startswith("-")]
    options = parser.parse_args([a for a in rest if a not in launch_style])
    for item in launch_style:  # also accept `name:=value` like ros2 launch
        name, value = item.split(":=", 1)
        if getattr(options, name, "missing") == "missing" or name in ("domain_id", "timeout"):
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
        children = [Child(spec, node_command(spec, args, scenario))
                    for spec in graph.active_nodes(scenario, args)]
    except (ConfigError, FileNotFoundError) as exc:
        print(f"vehicle_sim_run: {exc}", file=sys.stderr)
        return 2
    env = ros_environment(args, options.domain_id)
    runner = Runner(children, env)
    loopback = graph.LOOPBACK_PROFILE in env.get("FASTDDS_DEFAULT_PROFILES_FILE", "")
    runner._say(f"scenario {args['scenario']}: {scenario.description}; ROS_DOMAIN_ID="
                f"{env['ROS_DOMAIN_ID']}, discovery {args['discovery_range']}"
                f"{' (loopback-only DDS profile)' if loopback else ''}")
    stop = threading.Event()
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    for child in children:
        runner.start(child)
    reason = runner.supervise(stop, options.timeout)
    runner._say(f"stopping: {reason}")
    runner.stop_all()
    print(report(children, reason), flush=True)
    failed = [c for c in children if c.exit_code not in (0, -signal.SIGINT)]
    return 1 if failed or "timeout" in reason else 0


def report(children: list[Child], reason: str) -> str:
    lines = ["==== vehicle_sim_run: processes ====", f"{'ended because':>22}: {reason}"]
    for c in children:
        lines.append(f"{c.spec.name:>22}: exit {c.exit_code}, respawned {c.respawns}x")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
