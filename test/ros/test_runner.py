"""The vehicle_sim_run runner: same graph as the launch file, clean shutdown, summary, errors."""
from __future__ import annotations

import json
import os
import signal
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

from vehicle_sim import graph, ros_distro, runner
from vehicle_sim.core.config import ConfigError, parse_yaml
from vehicle_sim.core.ros_yaml import yaml_text

RUNNER = str(Path(sys.executable).parent / "vehicle_sim_run")


def run(*args: str, timeout: float = 120.0, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([RUNNER, *args], capture_output=True, text=True, timeout=timeout,
                          **kwargs)


def start_runner(*args: str) -> tuple[subprocess.Popen, list[str]]:
    """Start the runner and read its output until the dynamics node is up."""
    proc = subprocess.Popen([RUNNER, *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    lines = []
    for line in proc.stdout:
        lines.append(line)
        if "[dynamics]" in line and "model" in line:
            break
    return proc, lines


def kill_dynamics(runner: subprocess.Popen) -> None:
    """SIGKILL this runner's dynamics node (its child: never another run's on the machine)."""
    pids = subprocess.run(["pgrep", "-P", str(runner.pid), "-f",
                           "dynamics_node --ros-args -r __node:=dynamics"],
                          capture_output=True, text=True).stdout.split()
    assert pids, "dynamics process not found"
    for pid in pids:
        os.kill(int(pid), signal.SIGKILL)


def test_bounded_fast_run_ends_cleanly_with_a_summary(tmp_path):
    result = run("--mode", "fast", "--duration", "5", "record_dir:=" + str(tmp_path),
                 "--timeout", "100")
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    assert "vehicle_sim run summary" in out and "reached duration 5 s" in out
    assert "dynamics: exit 0" in out and "sim_monitor: exit 0" in out
    # every /clock reader matched: the bridge, which reads none, is not waited for (15 s)
    assert "starting without a /clock reader" not in out, out
    # ... and every reader of the dynamics node's topics in the run (nodes.reach): a reader the
    # graph shows that never matches (an incompatible QoS) holds the start back 15 s too
    assert "starting before a reader" not in out, out
    summaries = list(tmp_path.glob("summary-*.json"))
    assert len(summaries) == 1 and '"sim_time_s": 5.' in summaries[0].read_text()
    summary = json.loads(summaries[0].read_text())
    assert summary["physics_steps"] <= 5000, "a status from after the duration was counted"


def test_unknown_scenario_is_refused_with_the_known_names():
    result = run("--scenario", "moon_base")
    assert result.returncode == 2
    assert "unknown scenario 'moon_base'" in result.stderr and "urban" in result.stderr


@pytest.mark.parametrize("content", [b"nodes: \xff\xfe\n", b"a: " + b"[" * 5000 + b"]" * 5000])
def test_a_hostile_scenario_file_is_refused_with_one_line_and_exit_2(tmp_path, content):
    path = tmp_path / "hostile.yaml"
    path.write_bytes(content)
    result = run("--scenario", str(path))
    assert result.returncode == 2, result.stdout + result.stderr
    assert "hostile.yaml" in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr


def urban_with(folder: Path, params_file: str, text: str) -> Path:
    """folder/urban.yaml: the urban scenario with its node's ``params_file`` replaced by
    ``text`` (written to folder/params_file, whose path is returned)."""
    from vehicle_sim.paths import config_path
    params = folder / params_file
    params.write_text(text)
    (folder / "urban.yaml").write_text(config_path("scenarios/urban.yaml").read_text()
                                       .replace(f"params_file: {params_file}",
                                                f"params_file: {params}"))
    return params


def test_a_scenario_whose_nodes_model_two_egos_is_refused_before_any_starts(tmp_path):
    """The IMU given a truck while the dynamics node integrates the medium car: exit 2, one line
    naming the node, its parameter and both files (vehicle_sim.scenario_check)."""
    urban_with(tmp_path, "imu.yaml", "/**:\n  ros__parameters:\n    vehicle_file: "
               "vehicles/truck.yaml\n")
    result = run("--scenario", str(tmp_path / "urban.yaml"))
    assert result.returncode == 2, result.stdout + result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "imu.vehicle_file: vehicles/truck.yaml where dynamics.vehicle_file is " \
           "vehicles/medium_car.yaml" in result.stderr, result.stderr
    assert "ROS_DOMAIN_ID" not in result.stdout, result.stdout  # no process was started


def test_a_record_dir_the_run_cannot_write_is_refused_before_any_node_starts(tmp_path):
    """The summary goes to record_dir at the end: found out then, the run's result was lost."""
    (tmp_path / "file").write_text("")
    result = run("--record_dir", str(tmp_path / "file" / "runs"))
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.strip().splitlines() == [
        f"vehicle_sim_run: --record_dir: {tmp_path}/file/runs: cannot be made (Not a "
        f"directory)"], result.stderr
    assert "ROS_DOMAIN_ID" not in result.stdout, result.stdout


def test_a_misspelt_ros_parameters_is_refused_before_any_node_starts(tmp_path):
    """rcl refuses it in the node ("Cannot have a value before ros__parameters"), which the
    shipped scenario respawns without end: the runner's check names it first."""
    bridge = urban_with(tmp_path, "bridge.yaml",
                        "/**:\n  ros_parameters:\n    platform_rate_hz: 100.0\n")
    result = run("--scenario", str(tmp_path / "urban.yaml"))
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.strip().splitlines() == [
        f"vehicle_sim_run: {bridge}: /**.ros_parameters: unexpected: a node's section holds "
        f"its parameters under ros__parameters"], result.stderr


def test_a_node_that_refuses_its_configuration_is_not_respawned_and_the_run_exits_2(tmp_path):
    """Exit 2 is a node's "refusing to start" (nodes.main): a respawn would refuse again."""
    exe = tmp_path / "refuses"
    exe.write_text("#!/bin/sh\necho 'refusing to start: a bad value' >&2\nexit 2\n")
    exe.chmod(0o755)
    path = tmp_path / "refusing.yaml"
    path.write_text(f"description: a node that refuses\nnodes:\n  - {{name: refuser, "
                    f"executable: {exe}, respawn: true, respawn_delay_s: 0.1}}\n")
    result = run("--scenario", str(path), "--foreign_executables", "--timeout", "60")
    out = result.stdout + result.stderr
    assert result.returncode == 2, out
    assert "refuser exited 2, refusing its configuration" in out and "respawned 0x" in out, out
    assert "respawning" not in out, out


FOREIGN = """description: a scenario that starts a program that is not a vehicle_sim node
nodes:
  - name: intruder
    executable: "{exe}"
"""


@pytest.mark.parametrize("exe", ["/bin/true", "true", "../../../bin/true"])
def test_a_scenario_starts_only_vehicle_sim_nodes_unless_the_user_allows_others(tmp_path, exe):
    path = tmp_path / "foreign.yaml"
    path.write_text(FOREIGN.format(exe=exe))
    refused = run("--scenario", str(path))
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "nodes[0].executable" in refused.stderr and "--foreign_executables" in refused.stderr
    if exe != "../../../bin/true":
        allowed = run("--scenario", str(path), "--foreign_executables", "--timeout", "60")
        out = allowed.stdout + allowed.stderr
        assert "intruder exited with code 0" in out, out


def test_the_node_executables_are_the_package_entry_points():
    import tomllib
    pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
    scripts = tomllib.loads(pyproject.read_text())["project"]["scripts"]
    tools = {"vehicle_sim_run", "vehicle_sim_report", "vehicle_sim_sweep",  # not nodes
             "vehicle_sim_export_map",
             "vehicle_sim_live",  # a viewer: the runner starts it with --live true
             graph.COMPOSE_EXECUTABLE}  # runs the node executables of one process
    assert sorted(graph.NODE_EXECUTABLES) == sorted(set(scripts) - tools)
    with pytest.raises(FileNotFoundError, match="not a path"):
        runner.executable("/bin/sh")


def test_ctrl_c_stops_every_node_and_prints_the_summary(tmp_path):
    proc, lines = start_runner("--duration", "0", "--record_dir", str(tmp_path))
    time.sleep(1.0)
    proc.send_signal(signal.SIGINT)
    out = "".join(lines) + proc.communicate(timeout=60)[0]
    assert proc.returncode == 0, out
    assert "interrupted (Ctrl-C)" in out and "vehicle_sim run summary" in out


def gone(pid: int) -> bool:
    """The process has ended (or is a zombie waiting for its reaper)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1].startswith("Z")
    except (FileNotFoundError, ProcessLookupError):
        return True


@pytest.mark.parametrize("sig", [signal.SIGHUP, signal.SIGKILL])
def test_no_node_outlives_a_runner_that_is_hung_up_or_killed(tmp_path, sig):
    """A closed terminal (SIGHUP) stops the run as Ctrl-C does; a killed runner's nodes get
    SIGINT from the kernel (PR_SET_PDEATHSIG) and end: no node runs on, orphaned."""
    proc, lines = start_runner("--duration", "0", "--record_dir", str(tmp_path))
    nodes = [int(p) for p in subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True,
                                            text=True).stdout.split()]
    assert len(nodes) >= 5, nodes
    time.sleep(1.0)
    proc.send_signal(sig)
    out = "".join(lines) + proc.communicate(timeout=60)[0]
    if sig == signal.SIGHUP:
        assert proc.returncode == 0 and "interrupted (SIGHUP)" in out, out
    deadline = time.monotonic() + 30.0
    while not all(gone(p) for p in nodes) and time.monotonic() < deadline:
        time.sleep(0.2)
    left = [p for p in nodes if not gone(p)]
    for p in left:
        os.kill(p, signal.SIGKILL)
    assert not left, f"{len(left)} nodes outlived the runner"


def test_the_report_is_of_the_runs_own_recording_not_the_newest_file_in_its_folder(tmp_path):
    """Another writer's unfinished MCAP, newer than this run's, in the same folder: the runner
    reports the file its node said it records to."""
    other = tmp_path / "vehicle_sim-other-run.mcap"
    other.write_bytes(b"\x89MCAP0\r\n unfinished")
    later = time.time() + 3600.0
    os.utime(other, (later, later))
    result = run("--engine", "true", "--mode", "lockstep", "--duration", "2", "--record", "true",
                 "--record_dir", str(tmp_path), "--timeout", "100", timeout=150)
    out = result.stdout + result.stderr
    assert result.returncode == 0, out[-3000:]
    own = [p for p in tmp_path.glob("*.mcap") if p != other]
    assert len(own) == 1 and f"recording to {own[0]}" in out, out[-3000:]
    assert "no report" not in out and f"report: {tmp_path}" in out, out[-3000:]


def test_a_local_run_opens_dds_sockets_on_loopback_only(tmp_path):
    """LOCALHOST discovery alone still leaves rmw_fastrtps listening on 0.0.0.0 and on every
    interface: the runner gives its nodes the loopback-only profile, checked on the real
    sockets of every node process."""
    processes = len(graph.processes(graph.load_scenario("urban"), graph.resolve_args({})))
    proc, lines = start_runner("--duration", "0", "--record_dir", str(tmp_path))
    try:
        deadline = time.monotonic() + 60.0
        while True:  # until every node process has its DDS sockets (busy host: slow imports)
            children = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True,
                                      text=True).stdout.split()
            sockets = subprocess.run(["ss", "-tuanpH"], capture_output=True, text=True).stdout
            per_child = {pid: [line.split()[4] for line in sockets.splitlines()
                               if f"pid={pid}," in line] for pid in children}
            if len(children) >= processes and all(len(a) >= 3 for a in per_child.values()):
                break
            assert time.monotonic() < deadline, per_child
            time.sleep(0.5)
        local = {address for addresses in per_child.values() for address in addresses}
        assert all(address.startswith("127.0.0.1:") for address in local), local
    finally:
        proc.send_signal(signal.SIGINT)
        out = "".join(lines) + proc.communicate(timeout=60)[0]
    assert "loopback-only DDS profile" in out and proc.returncode == 0, out


def test_a_reader_that_goes_away_ends_the_run_and_every_node(tmp_path):
    """`vehicle_sim_run | head`: the nodes run in sessions of their own, so a runner that died
    of the closed pipe left the whole graph running (a loop child at 100 % CPU); it now ends the
    run as for Ctrl-C."""
    proc, lines = start_runner("--duration", "0", "--record_dir", str(tmp_path))
    for line in proc.stdout:  # until the dynamics loop runs in its child process
        if "physics loop started" in line:
            break
    children = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True,
                              text=True).stdout.split()
    sessions = [pid for child in children for pid in subprocess.run(
        ["pgrep", "-s", child], capture_output=True, text=True).stdout.split()]
    assert len(children) > 5 and set(children) <= set(sessions)  # with the loop's child
    proc.stdout.close()  # the next line the runner writes has no reader
    assert proc.wait(timeout=90) == 0
    deadline = time.monotonic() + 10.0  # the loop child is reaped by init
    while [pid for pid in sessions if Path(f"/proc/{pid}").exists()]:
        assert time.monotonic() < deadline, [pid for pid in sessions
                                             if Path(f"/proc/{pid}").exists()]
        time.sleep(0.2)


def test_a_dying_node_shuts_the_run_down(tmp_path):
    proc, lines = start_runner("--duration", "0", "--record_dir", str(tmp_path))
    kill_dynamics(proc)
    out = "".join(lines) + proc.communicate(timeout=60)[0]
    assert proc.returncode == 1, out
    assert "dynamics exited with code -9" in out and "sim_monitor: exit 0" in out


def test_runner_commands_match_the_declared_graph():
    args = graph.resolve_args({"mode": "fast"})
    scenario = graph.load_scenario("urban")
    names = [spec.name for spec in graph.active_nodes(scenario, args)]
    assert "recorder" not in names  # its condition (record) is false by default
    for spec in graph.active_nodes(scenario, args):
        cmd = runner.node_command(spec, args, scenario)
        assert cmd[1:4] == ["--ros-args", "-r", f"__node:={spec.name}"]
        assert "use_sim_time:=true" in cmd
        for name in spec.args:  # as rcl reads it back: a string quoted, a number bare
            value = parse_yaml(args[name], "t")
            assert f"{name}:={yaml_text(value)}" in cmd
            assert yaml_text(value) == (f"'{value}'" if isinstance(value, str) else args[name])
        if spec.params_file:
            assert str(graph.params_file(spec)) in cmd and graph.params_file(spec).is_file()
    assert graph.node_parameters(scenario.nodes[0], args, scenario) == {
        "use_sim_time": True, "mode": "fast", "real_time_factor": 1.0, "base_link": "cg",
        "duration": 0.0, "wait_for_nodes": names[1:],  # the clock owner waits for every other node
        "clockless_nodes": ["bridge"],  # ... and for their /clock readers, but the bridge's
        "lockstep_peers": ["traffic", "imu", "gps", "ego_driver"]}
    with pytest.raises(ConfigError, match="use_sim_time: false is not supported"):
        graph.resolve_args({"mode": "fast", "use_sim_time": "false"})  # two clocks (graph.py)
    assert graph.node_parameters(scenario.nodes[1], args, scenario)["lockstep"] is False
    ego = next(n for n in scenario.nodes if n.name == "ego_driver")
    assert graph.node_parameters(ego, args, scenario) == {
        "use_sim_time": True, "seed": 0, "lockstep": False, "lockstep_inputs": ["traffic"]}
    # in lockstep, each peer learns the run's other nodes (lockstep_peer: whose readers it
    # reaches before its first frame); with record:=true the recorder is a peer too
    args = graph.resolve_args({"mode": "lockstep", "record": "true"})
    names = [spec.name for spec in graph.active_nodes(scenario, args)]
    recorder = next(n for n in scenario.nodes if n.name == "recorder")
    for spec in (ego, recorder):
        values = graph.node_parameters(spec, args, scenario)
        assert values["lockstep"] is True
        assert values["lockstep_graph"] == [n for n in names if n != spec.name]
    assert "recorder" in graph.node_parameters(scenario.nodes[0], args, scenario)["lockstep_peers"]
    # the nodes of one `process` run in one vehicle_sim_compose, a section of their own each
    for process in graph.processes(scenario, args):
        cmd = runner.process_command(process, args, scenario)
        if not process.composed:
            assert cmd == runner.node_command(process.nodes[0], args, scenario)
            continue
        assert Path(cmd[0]).name == graph.COMPOSE_EXECUTABLE
        for node in process.nodes:
            section = [node.executable, *graph.ros_arguments(node, args, scenario), "--"]
            start = cmd.index(node.executable)
            assert cmd[start:start + len(section)] == section


def test_one_base_link_argument_reaches_the_dynamics_node_and_the_sensors():
    args = graph.resolve_args({"base_link": "rear_axle"})
    for name in ("urban", "urban_sharded"):
        scenario = graph.load_scenario(name)
        given = {spec.name: graph.node_parameters(spec, args, scenario).get("base_link")
                 for spec in graph.active_nodes(scenario, args)}
        assert given["dynamics"] == given["imu"] == given["gps"] == given["bridge"] == \
            "rear_axle", name  # the bridge: Autoware's velocity report at that point
    with pytest.raises(ValueError, match="base_link"):
        graph.resolve_args({"base_link": "front_bumper"})


def test_the_vehicle_file_argument_runs_another_ego_in_every_node(tmp_path):
    """vehicle_file:=vehicles/small_car.yaml reaches the dynamics node, the ego driver and the
    recording (its metadata names the ego's file, the report's box), and the run goes on."""
    from mcap.reader import make_reader
    result = run("--mode", "fast", "--duration", "3", "--vehicle_file",
                 "vehicles/small_car.yaml", "--record", "true", "--record_dir", str(tmp_path),
                 "--timeout", "120", timeout=200)
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    for node in ("dynamics", "ego_driver"):
        assert any(f"[{node}]" in line and "vehicle vehicles/small_car.yaml" in line
                   for line in out.splitlines()), out
    (path,) = tmp_path.glob("*.mcap")
    with path.open("rb") as f:
        meta = {m.name: m.metadata for m in make_reader(f).iter_metadata()}
    assert meta["vehicle_sim"]["vehicle_file"] == "vehicles/small_car.yaml"


def test_a_node_declared_respawn_is_restarted(tmp_path):
    scenario = tmp_path / "respawn.yaml"
    scenario.write_text(
        "description: dynamics respawns\n"
        "nodes:\n"
        "  - {name: dynamics, executable: dynamics_node, params_file: dynamics.yaml,\n"
        "     args: [mode], respawn: true, respawn_delay_s: 0.5}\n"
        "  - {name: sim_monitor, executable: sim_monitor, args: [duration, record_dir]}\n")
    proc, lines = start_runner("--scenario", str(scenario), "--mode", "realtime",
                               "--duration", "4", "--record_dir", str(tmp_path))
    kill_dynamics(proc)
    out = "".join(lines) + proc.communicate(timeout=90)[0]
    assert proc.returncode == 0, out
    assert "respawning in 0.5 s" in out and "respawned 1x" in out
    assert "reached duration 4 s" in out


REPEATED = ("/vehicle/state", "/autonomy/control", "/vehicle/control", "/traffic/agents",
            "/imu/data", "/gnss/fix", "/faults/status")
# one scheduled fault per kind of target, applied and expired inside an 8 s run: the accident
# node (no lockstep peer) sends each PUBLISH_LEAD_S ahead, the target applies it at its time
SCHEDULE = [
    {"at_s": 0.5, "target": "gps", "fault": "NO_FIX", "id": 1, "duration_s": 1.0},
    {"at_s": 2.0, "target": "vehicle", "fault": "BRAKE_FAILURE", "id": 2, "value": 0.5,
     "duration_s": 2.0},
    {"at_s": 3.0, "target": "imu", "fault": "FREEZE", "id": 3, "duration_s": 1.0},
    {"at_s": 4.5, "target": "traffic", "fault": "FULL_BRAKE", "id": 4,
     "channel": "nearest_ahead", "duration_s": 2.0},
    {"at_s": 5.0, "target": "gps", "fault": "POSITION_JUMP", "id": 5,
     "vector": [3.0, 0.0, 0.0], "duration_s": 2.0}]


def recorded_by_stamp(folder: Path) -> dict[str, dict[int, tuple[bytes, ...]]]:
    """Raw CDR of each compared topic's messages, keyed by header stamp [ns] (each of these
    types starts with a std_msgs/Header: after the 4-byte CDR encapsulation, int32 sec and
    uint32 nanosec, little endian as written by Fast DDS here); several messages with one stamp
    (one agent array per traffic shard) are kept sorted."""
    reader = pytest.importorskip("mcap.reader", reason="mcap not installed")
    out: dict[str, dict[int, list[bytes]]] = {t: {} for t in REPEATED}
    with open(next(folder.glob("*.mcap")), "rb") as f:
        for _, channel, msg in reader.make_reader(f).iter_messages(topics=list(REPEATED)):
            assert msg.data[:2] == b"\x00\x01", "CDR little endian"
            sec, nanosec = struct.unpack_from("<iI", msg.data, 4)
            out[channel.topic].setdefault(sec * 10**9 + nanosec, []).append(bytes(msg.data))
    return {t: {k: tuple(sorted(v)) for k, v in by.items()} for t, by in out.items()}


def lockstep_runs(tmp_path: Path, *args: str) -> list[dict[str, dict[int, tuple[bytes, ...]]]]:
    """Two seeded 8 s lockstep runs of a scenario, recorded; each drove and met traffic."""
    runs = []
    for k in (1, 2):
        folder = tmp_path / f"run{k}"
        result = run("--mode", "lockstep", "--duration", "8", "--seed", "3", "--record", "true",
                     "--record_dir", str(folder), "--timeout", "150", *args, timeout=200)
        assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
        summary = json.loads(next(folder.glob("summary-*.json")).read_text())
        assert summary["sim_time_s"] >= 8.0 and summary["distance_m"] > 5.0, summary
        assert summary["traffic_agents_max"] > 0
        runs.append(recorded_by_stamp(folder))
    return runs


def assert_same_where_both_recorded(runs, expected: dict[str, int]) -> None:
    """Per topic: every expected vehicle state in both runs (the recorder is a lockstep peer
    that acknowledges each frame by its state: the protocol guarantees those), at least half
    of the other topics' expected stamps (keep-last queues: a loaded recorder misses some; a
    clean-clone-like run beside another test run held 1265 of 1600 IMU samples in both), so
    the comparison covers seconds of each, and the same bytes at every stamp where both runs
    hold as many."""
    for topic, count in expected.items():
        a, b = runs[0][topic], runs[1][topic]
        common = sorted(t for t in set(a) & set(b) if len(a[t]) == len(b[t]))
        share = 1.0 if topic == "/vehicle/state" else 0.5
        assert len(common) >= share * count, f"{topic}: {len(a)} / {len(b)} recorded"
        differ = [t for t in common if a[t] != b[t]]
        assert not differ, f"{topic}: runs differ first at t={differ[0] * 1e-9:.3f} s"


def fault_changes(recorded: dict[int, tuple[bytes, ...]]) -> list[tuple[float, int, str, int]]:
    """(sim time [s], id, target, state) of each recorded FaultStatus, in time order."""
    from rclpy.serialization import deserialize_message

    from vehicle_sim.msg import FaultStatus
    out = []
    for t_ns, datas in sorted(recorded.items()):
        for data in datas:
            s = deserialize_message(data, FaultStatus)
            out.append((t_ns * 1e-9, s.id, s.target, s.state))
    return out


def test_seeded_lockstep_runs_of_the_urban_graph_repeat_exactly(tmp_path):
    """Two lockstep runs with one seed and a fault schedule: the ego's states, the autopilot's
    and the mux's commands, the traffic agents and the noisy IMU and GNSS samples are the same
    bytes at the same sim times (DDS timing differs between the runs); the ego drove and met
    traffic, so the comparison means something; every scheduled fault took effect and ended at
    its own sim time in both (faults/status: reliable and latched, so all of it is recorded)."""
    from test.core.test_fault_schedule import scenario_with
    from vehicle_sim.msg import FaultStatus

    runs = lockstep_runs(tmp_path, "--scenario", scenario_with(tmp_path, SCHEDULE))
    assert_same_where_both_recorded(runs, {
        "/vehicle/state": 800, "/autonomy/control": 400, "/vehicle/control": 400,
        "/traffic/agents": 160, "/imu/data": 1600, "/gnss/fix": 80})  # 8 s at their rates
    expected = sorted([(e["at_s"], e["id"], e["target"], FaultStatus.STATE_ACTIVE)
                       for e in SCHEDULE] +
                      [(e["at_s"] + e["duration_s"], e["id"], e["target"],
                        FaultStatus.STATE_CLEARED) for e in SCHEDULE])
    for recorded in runs:
        changes = fault_changes(recorded["/faults/status"])
        assert sorted((round(t, 6), i, target, state) for t, i, target, state in changes) == \
            expected, changes


def test_seeded_lockstep_runs_with_two_traffic_shards_repeat_exactly(tmp_path):
    """The same with the traffic split between two shards that hand agents over: both shards'
    agent arrays are the same bytes in both runs, and agents did change owner."""
    from rclpy.serialization import deserialize_message

    from vehicle_sim.msg import TrafficAgentArray
    runs = lockstep_runs(tmp_path, "--scenario", "urban_sharded")
    assert_same_where_both_recorded(runs, {
        "/vehicle/state": 800, "/vehicle/control": 400, "/traffic/agents": 160,
        "/imu/data": 1600})
    owners: dict[int, set[int]] = {}  # agent id -> shards that owned it
    for arrays in runs[0]["/traffic/agents"].values():
        for data in arrays:
            for a in deserialize_message(data, TrafficAgentArray).agents:
                if not a.ghost:
                    owners.setdefault(a.id, set()).add(a.owner)
    assert any(len(s) > 1 for s in owners.values()), "no agent was handed over"


def test_the_loopback_profile_is_given_under_the_name_the_distributions_fast_dds_reads():
    """Fast DDS 3 (Kilted) reads FASTDDS_DEFAULT_PROFILES_FILE and warns in every process when
    FASTRTPS_DEFAULT_PROFILES_FILE is set, Fast DDS 2 (Jazzy) reads only FASTRTPS_...: a LOCALHOST
    run sets the one of ROS_DISTRO, else of the venv's record; a user's own profile, under either
    name, or SUBNET, gets none."""
    both = {"FASTDDS_DEFAULT_PROFILES_FILE", "FASTRTPS_DEFAULT_PROFILES_FILE"}
    for distro, want in (("kilted", {"FASTDDS_DEFAULT_PROFILES_FILE"}),
                         ("rolling", {"FASTDDS_DEFAULT_PROFILES_FILE"}),
                         ("jazzy", {"FASTRTPS_DEFAULT_PROFILES_FILE"}),
                         ("humble", {"FASTRTPS_DEFAULT_PROFILES_FILE"}),
                         ("foxy", both), ("zeta", both)):  # not known here: both, never none
        env = graph.dds_environment("LOCALHOST", {"ROS_DISTRO": distro})
        assert set(env) == {"ROS_AUTOMATIC_DISCOVERY_RANGE", *want}, distro
        assert env["ROS_AUTOMATIC_DISCOVERY_RANGE"] == "SYSTEM_DEFAULT"
        assert all(env[var].endswith(graph.LOOPBACK_PROFILE) for var in want)
    # this process, no ROS_DISTRO given: the record of the venv (scripts/setup.sh), else kilted
    record = Path(sys.prefix) / ros_distro.VENV_RECORD
    recorded = record.read_text().strip() if record.is_file() else "kilted"
    want = ("FASTRTPS_DEFAULT_PROFILES_FILE" if recorded in ros_distro.FAST_DDS_2_DISTROS
            else "FASTDDS_DEFAULT_PROFILES_FILE")
    assert want in graph.dds_environment("LOCALHOST", {})
    for own in ({"FASTRTPS_DEFAULT_PROFILES_FILE": "/x.xml"},
                {"FASTDDS_DEFAULT_PROFILES_FILE": "/x.xml"}):
        assert graph.dds_environment("LOCALHOST", own) == {"ROS_AUTOMATIC_DISCOVERY_RANGE":
                                                          "LOCALHOST"}
    assert graph.dds_environment("SUBNET", {}) == {"ROS_AUTOMATIC_DISCOVERY_RANGE": "SUBNET"}


def test_the_distribution_is_the_sourced_ones_else_the_venvs_record_else_kilted(tmp_path):
    assert ros_distro.ros_distro({"ROS_DISTRO": "jazzy"}, tmp_path) == "jazzy"
    assert ros_distro.ros_distro({}, tmp_path) == ros_distro.DEFAULT_DISTRO == "kilted"
    (tmp_path / ros_distro.VENV_RECORD).write_text("jazzy\n")
    assert ros_distro.ros_distro({}, tmp_path) == "jazzy"
    assert ros_distro.ros_distro({"ROS_DISTRO": "kilted"}, tmp_path) == "kilted"
