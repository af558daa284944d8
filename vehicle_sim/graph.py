"""The node graph of a scenario: ONE declaration read by both launch/urban.launch.py (launch_ros)
and the `vehicle_sim_run` runner (plain subprocesses), so both start the same executables with
the same names, parameter files, parameters, remappings and respawn rules.

No ROS import here. A scenario is config/scenarios/<name>.yaml (see config/scenarios/urban.yaml).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from vehicle_sim import ros_distro
from vehicle_sim.core.config import (
    ConfigError,
    build,
    load_yaml,
    parse_yaml,
    spec,
)
from vehicle_sim.core.dynamics_params import MODES
from vehicle_sim.core.fault_schedule import MAX_ENTRIES, ScheduledFault
from vehicle_sim.core.frames import REFERENCE_POINTS
from vehicle_sim.core.ros_yaml import yaml_text
from vehicle_sim.paths import config_path, share_dir

DISCOVERY_RANGES = ("LOCALHOST", "SUBNET", "SYSTEM_DEFAULT", "OFF")


@dataclass(frozen=True)
class LaunchArg:
    name: str
    default: str
    description: str
    choices: tuple[str, ...] = ()


LAUNCH_ARGS = (
    LaunchArg("scenario", "urban", "scenario config/scenarios/<name>.yaml, or a path to a "
              "scenario file"),
    LaunchArg("use_sim_time", "true", "every node follows /clock from the dynamics node (false "
              "is refused: the nodes' stamps and steps are the dynamics node's simulation time)",
              ("true", "false")),
    LaunchArg("mode", "realtime", "dynamics pacing: realtime (x real_time_factor), fast "
              "(as fast as possible) or lockstep (waits for every peer each frame)",
              MODES),
    LaunchArg("real_time_factor", "1.0", "simulated seconds per wall second in realtime mode"),
    LaunchArg("duration", "0.0", "stop after this many simulated seconds (the physics holds at "
              "the first state period at or after it; 0 = until Ctrl-C)"),
    LaunchArg("seed", "0", "seed of every random process (traffic, sensor noise)"),
    LaunchArg("record", "false", "record the main topics to an MCAP file in record_dir",
              ("true", "false")),
    LaunchArg("record_dir", "runs", "folder for MCAP recordings and run summaries"),
    LaunchArg("headless", "true", "false also starts rviz2 where it is installed",
              ("true", "false")),
    LaunchArg("base_link", "cg", "reference point of base_link for the dynamics node, the "
              "sensors and the bridge's velocity report: the CG, or the rear-axle centre on the "
              "ground (Autoware's)",
              REFERENCE_POINTS),
    LaunchArg("vehicle_file", "", "the ego's vehicle file (relative to config/, e.g. "
              "vehicles/truck.yaml, or absolute) for every node that models the ego "
              "(EGO_VEHICLE_PARAMS: the dynamics, sensors, bridge, ego driver, accident node, "
              "the traffic's gaps to the ego, the recording); empty: as the nodes' parameter "
              "files give it"),
    LaunchArg("engine", "false", "true runs the scenario's cores in one process, stepped in a "
              "fixed order with ROS only at the edges (nodes.engine_node): a batch run (mode "
              "lockstep or fast) far faster than the node graph, repeatable with its seed",
              ("true", "false")),
    LaunchArg("discovery_range", "LOCALHOST", "ROS_AUTOMATIC_DISCOVERY_RANGE for every node; "
              "SUBNET to reach rigs and stacks on a LAN (an explicit choice)", DISCOVERY_RANGES),
)


# the parameter holding the ego's vehicle file, by node executable (the traffic node's own
# vehicle file is its agents' car, in its traffic parameters): the vehicle_file launch argument
# sets them all, scenario_check holds them to one file
EGO_VEHICLE_PARAMS = {"dynamics_node": "vehicle_file", "imu_node": "vehicle_file",
                      "gps_node": "vehicle_file", "bridge_node": "vehicle_file",
                      "ego_driver_node": "vehicle_file", "accident_node": "vehicle_file",
                      "recorder_node": "vehicle_file", "traffic_node": "ego_vehicle_file"}

# fault targets owned by the nodes (FaultCommand.target); a node's name is the target of the
# faults of its topic links
FAULT_TARGETS = frozenset({"gps", "imu", "vehicle", "platform", "wheel", "traffic"})

# the package's node executables ([project.scripts] of pyproject.toml, less the runner)
NODE_EXECUTABLES = ("dynamics_node", "traffic_node", "imu_node", "gps_node", "bridge_node",
                    "ego_driver_node", "accident_node", "sim_monitor", "recorder_node",
                    "ground_truth_node", "engine_node")


@dataclass(frozen=True)
class NodeSpec:
    name: str = spec()
    """ROS node name"""
    executable: str = spec()
    """console script (lib/vehicle_sim/<exe> or bin/<exe>)"""
    params_file: str = spec("")
    """parameter file relative to config/, '' for none"""
    args: tuple[str, ...] = spec(())
    """launch arguments passed as parameters of that name"""
    remappings: tuple[str, ...] = spec(())
    """'from:=to' topic remappings"""
    respawn: bool = spec(False)
    """restart the node when it exits"""
    respawn_delay_s: float = spec(2.0, unit="s", ge=0.0, le=60.0)
    """a choice: a node back only after a minute has missed the run"""
    shutdown_on_exit: bool = spec(True)
    """end the whole run when this node exits (ignored with respawn)"""
    condition: str = spec("")
    """launch argument that must be 'true' to start the node"""
    wait_for_graph: bool = spec(False)
    """pass the names of the other nodes of the run as parameter wait_for_nodes (the clock owner
    waits for them), and the lockstep peers as lockstep_peers"""
    lockstep_peer: bool = spec(False)
    """acknowledges every frame in mode lockstep (gets parameter lockstep = true in that mode)"""
    lockstep_inputs: tuple[str, ...] = spec(())
    """lockstep peers whose outputs this peer waits for each frame (parameter lockstep_inputs)"""
    process: str = spec("")
    """nodes with the same process name run in one process, one executor (vehicle_sim_compose):
    fewer processes competing for the cores; '' = a process of its own (a user splits them by
    removing it)"""

    def __post_init__(self) -> None:
        for remap in self.remappings:
            if remap.count(":=") != 1:
                raise ValueError(f"remapping {remap!r} of node {self.name} is not 'from:=to'")
        known = {a.name for a in LAUNCH_ARGS}
        for arg in (*self.args, *((self.condition,) if self.condition else ())):
            if arg not in known:
                raise ValueError(f"node {self.name}: unknown launch argument {arg!r}")


@dataclass(frozen=True)
class Scenario:
    description: str = spec()
    """one line shown by the runner"""
    nodes: tuple[NodeSpec, ...] = spec()
    """the processes of the scenario"""
    schedule: tuple[ScheduledFault, ...] = spec(())
    """faults and instructor actions at simulation times (core/fault_schedule.py)"""

    def __post_init__(self) -> None:
        names = [n.name for n in self.nodes]
        self._check_schedule(set(names))
        dupes = {n for n in names if names.count(n) > 1}
        if dupes:
            raise ValueError(f"duplicate node names: {', '.join(sorted(dupes))}")
        peers = {n.name for n in self.nodes if n.lockstep_peer}
        for n in self.nodes:
            if n.lockstep_inputs and not n.lockstep_peer:
                raise ValueError(f"node {n.name}: lockstep_inputs needs lockstep_peer: true")
            unknown = sorted(set(n.lockstep_inputs) - peers)
            if unknown:
                raise ValueError(f"node {n.name}: lockstep_inputs {unknown} are not lockstep "
                                 f"peers of the scenario")
        for n in (n for n in self.nodes if n.process):
            if n.executable not in NODE_EXECUTABLES:  # vehicle_sim_compose runs only those
                raise ValueError(f"process {n.process!r}: {n.executable!r} of node {n.name} is "
                                 f"not a vehicle_sim node and cannot share a process")
            first = next(m for m in self.nodes if m.process == n.process)
            if _life(n) != _life(first):
                raise ValueError(f"process {n.process!r}: nodes {first.name} and {n.name} differ "
                                 f"in respawn, respawn_delay_s or shutdown_on_exit (a process "
                                 f"lives and ends as one)")
            elsewhere = {m.name for m in self.nodes if m.process != n.process}
            if n.process in elsewhere:
                raise ValueError(f"process {n.process!r} has the name of node {n.process} of "
                                 f"another process")

    def _check_schedule(self, node_names: set[str]) -> None:
        if len(self.schedule) > MAX_ENTRIES:
            raise ValueError(f"schedule: {len(self.schedule)} entries, at most {MAX_ENTRIES}")
        targets = FAULT_TARGETS | node_names
        for i, e in enumerate(self.schedule):
            if e.target not in targets:
                raise ValueError(f"schedule[{i}].target: unknown target {e.target!r} (known: "
                                 f"{', '.join(sorted(targets))})")


def _life(node: NodeSpec) -> tuple[bool, float, bool]:
    return node.respawn, node.respawn_delay_s, node.shutdown_on_exit


@dataclass(frozen=True)
class Process:
    """One process of a run: a node of its own, or the nodes of one ``process`` name."""

    name: str  # the node's name, or the process name
    nodes: tuple[NodeSpec, ...]

    @property
    def composed(self) -> bool:
        return self.name != self.nodes[0].name or len(self.nodes) > 1

    # a process lives and ends as its nodes do (they agree: Scenario checks it)
    @property
    def respawn(self) -> bool:
        return self.nodes[0].respawn

    @property
    def respawn_delay_s(self) -> float:
        return self.nodes[0].respawn_delay_s

    @property
    def shutdown_on_exit(self) -> bool:
        return self.nodes[0].shutdown_on_exit


# the process of launch argument engine:=true (nodes.engine_node); ends the run when it exits
ENGINE_NODE = NodeSpec(name="engine", executable="engine_node",
                       args=("scenario", "seed", "duration", "record", "record_dir",
                             "base_link", "vehicle_file"))

# the program that runs several nodes in one process (vehicle_sim.nodes.compose)
COMPOSE_EXECUTABLE = "vehicle_sim_compose"


# executables that read no /clock whatever use_sim_time says (nodes.bridge_node: the wall clock
# is its time): the clock owner does not wait for their /clock readers (nodes.graph_start)
CLOCKLESS_EXECUTABLES = frozenset({"bridge_node"})
# nodes that run beside the engine (engine:=true), as readers of its edges: their inputs are
# topics the engine publishes (the ground truth: traffic/agents, traffic/lights; vehicle/state
# too, with a range filter, range_m > 0)
ENGINE_READERS = frozenset({"ground_truth_node"})


def engine_readers(scenario: Scenario, args: dict[str, str]) -> list[NodeSpec]:
    """The scenario's active nodes that run beside the engine; it waits for them to start."""
    return [n for n in active_nodes(scenario, args) if n.executable in ENGINE_READERS]


def processes(scenario: Scenario, args: dict[str, str]) -> list[Process]:
    """The run's processes, in the order of their first node; with ``engine`` true, the one
    engine process that runs the scenario's cores (vehicle_sim.engine_setup reads their
    parameters from this same declaration), and a process for each of its readers."""
    if args["engine"] == "true":
        return [Process(ENGINE_NODE.name, (ENGINE_NODE,)),
                *(Process(n.name, (n,)) for n in engine_readers(scenario, args))]
    groups: dict[str, list[NodeSpec]] = {}
    for node in active_nodes(scenario, args):
        groups.setdefault(node.process or node.name, []).append(node)
    return [Process(name, tuple(nodes)) for name, nodes in groups.items()]


def ros_arguments(node: NodeSpec, args: dict[str, str],
                  scenario: Scenario | None = None) -> list[str]:
    """``--ros-args -r __node:=<name> --params-file <file> -p <arg>:=<value> -r <from>:=<to>``:
    a node's name, parameters and remappings as rcl reads them."""
    out = ["--ros-args", "-r", f"__node:={node.name}"]
    file = params_file(node)
    if file is not None:
        out += ["--params-file", str(file)]
    for name, value in node_parameters(node, args, scenario).items():
        out += ["-p", f"{name}:={yaml_text(value)}"]
    for remap in node.remappings:
        out += ["-r", remap]
    return out


def compose_arguments(process: Process, args: dict[str, str],
                      scenario: Scenario | None = None) -> list[str]:
    """vehicle_sim_compose's arguments: per node, its executable and its own ROS arguments
    ended by ``--`` (nodes.compose)."""
    out: list[str] = []
    for node in process.nodes:
        out += [node.executable, *ros_arguments(node, args, scenario), "--"]
    return out


# Fast DDS profile that binds every socket to loopback (see its header); given to the node
# processes of a LOCALHOST run unless the user chose a profile, or another RMW, of their own
LOOPBACK_PROFILE = "dds/loopback.xml"
_FAST_DDS_RMWS = ("", "rmw_fastrtps_cpp", "rmw_fastrtps_dynamic_cpp")


def dds_environment(discovery_range: str, env: Mapping[str, str]) -> dict[str, str]:
    """The DDS variables of the node processes for launch argument ``discovery_range``.

    LOCALHOST with Fast DDS (the default): the loopback profile with
    ROS_AUTOMATIC_DISCOVERY_RANGE=SYSTEM_DEFAULT, because with LOCALHOST rmw_fastrtps adds a UDP
    transport listening on every interface; the profile discovers like LOCALHOST (unicast on
    127.0.0.1) and opens sockets on 127.0.0.1 only. Otherwise the range as given."""
    own_profile = any(env.get(var) for var in ros_distro.PROFILE_VARIABLES)
    if (discovery_range != "LOCALHOST" or own_profile
            or env.get("RMW_IMPLEMENTATION", "") not in _FAST_DDS_RMWS):
        return {"ROS_AUTOMATIC_DISCOVERY_RANGE": discovery_range}
    profile = str(config_path(LOOPBACK_PROFILE))
    # under the one name this distribution's Fast DDS reads (Fast DDS 3 warns on the other)
    return {"ROS_AUTOMATIC_DISCOVERY_RANGE": "SYSTEM_DEFAULT",
            **{var: profile for var in ros_distro.profile_variables(env)}}


def scenario_names() -> list[str]:
    return sorted(p.stem for p in (share_dir() / "config" / "scenarios").glob("*.yaml"))


def load_scenario(name: str, foreign_executables: bool = False) -> Scenario:
    """Load config/scenarios/<name>.yaml, or a scenario file given by its path (*.yaml);
    an unknown name lists the known ones. A node whose executable is not one of
    :data:`NODE_EXECUTABLES` is refused unless ``foreign_executables`` (the runner's explicit
    flag): a scenario file must not be a way to start any program on the machine."""
    path = (Path(name) if name.endswith(".yaml")
            else share_dir() / "config" / "scenarios" / f"{name}.yaml")
    if not path.is_file():
        raise ConfigError(str(path), "scenario",
                          f"unknown scenario {name!r} (known: {', '.join(scenario_names())})")
    scenario = build(Scenario, load_yaml(path), source=str(path))
    for i, node in enumerate(scenario.nodes):
        if node.executable not in NODE_EXECUTABLES and not foreign_executables:
            raise ConfigError(str(path), f"nodes[{i}].executable",
                              f"{node.executable!r} is not a vehicle_sim node (one of "
                              f"{', '.join(NODE_EXECUTABLES)}); the runner starts other "
                              f"programs only with --foreign_executables")
    return scenario


def resolve_args(given: dict[str, str]) -> dict[str, str]:
    """Launch-argument values with defaults filled in; unknown names, bad choices or an engine
    asked for in real time raise."""
    table = {a.name: a for a in LAUNCH_ARGS}
    for name, value in given.items():
        if name not in table:
            raise ConfigError("launch arguments", name, f"unknown (known: {', '.join(table)})")
        if table[name].choices and value not in table[name].choices:
            raise ConfigError("launch arguments", name,
                              f"{value!r} is not one of {', '.join(table[name].choices)}")
    args = {a.name: given.get(a.name, a.default) for a in LAUNCH_ARGS}
    if args["use_sim_time"] != "true":  # traffic and ego driver would run on the wall clock,
        # the dynamics node and the sensors on its steps from 0: two clocks, an ego never driven
        raise ConfigError("launch arguments", "use_sim_time", "false is not supported: every "
                          "node stamps and steps on the dynamics node's simulation time (/clock); "
                          "a stack beside the graph sets its own use_sim_time")
    if args["engine"] == "true" and args["mode"] == "realtime":
        raise ConfigError("launch arguments", "engine", "the engine runs batch runs, as fast as "
                          "the machine goes: give mode lockstep (or fast)")
    return args


def active_nodes(scenario: Scenario, args: dict[str, str]) -> list[NodeSpec]:
    return [n for n in scenario.nodes if not n.condition or args[n.condition] == "true"]


def params_file(node: NodeSpec) -> Path | None:
    return config_path(node.params_file) if node.params_file else None


def node_parameters(node: NodeSpec, args: dict[str, str],
                    scenario: Scenario | None = None) -> dict[str, object]:
    """Parameters set from launch arguments, typed as YAML reads them ('true' -> True, '1.0' ->
    1.0), as launch_ros hands them to the node; the runner writes them back as YAML text.
    The ``vehicle_file`` argument, when given, sets the node's EGO_VEHICLE_PARAMS entry.
    With ``wait_for_graph``, also ``wait_for_nodes``: the other active nodes of ``scenario``; a
    lockstep peer in mode lockstep gets them as ``lockstep_graph`` (nodes.lockstep_peer: whose
    readers it reaches before its first frame)."""
    names = ("use_sim_time", *node.args)
    values = {name: parse_yaml(args[name], "launch arguments", name) if args[name] else ""
              for name in names}
    if args["vehicle_file"] and node.executable in EGO_VEHICLE_PARAMS:
        values[EGO_VEHICLE_PARAMS[node.executable]] = args["vehicle_file"]
    if node == ENGINE_NODE:  # it starts stepping once its readers are up (engine_readers)
        readers = engine_readers(scenario, args) if scenario else []
        return {**values, **_waits(readers)}
    active = active_nodes(scenario, args) if scenario is not None else []
    others = [n.name for n in active if n.name != node.name]
    if node.wait_for_graph:
        values.update(_waits([n for n in active if n.name != node.name]))
    peers = [n.name for n in active if n.lockstep_peer]
    if node.wait_for_graph and peers:
        values["lockstep_peers"] = peers
    if node.lockstep_peer:
        values["lockstep"] = args["mode"] == "lockstep"
        if values["lockstep"] and others:
            values["lockstep_graph"] = others
        if node.lockstep_inputs:
            values["lockstep_inputs"] = list(node.lockstep_inputs)
    return values


def _waits(nodes: list[NodeSpec]) -> dict[str, list[str]]:
    """``wait_for_nodes`` (the clock owner's start waits for them) and ``clockless_nodes``,
    those of them that read no /clock: the bridge."""
    out: dict[str, list[str]] = {}
    if nodes:
        out["wait_for_nodes"] = [n.name for n in nodes]
    clockless = [n.name for n in nodes if n.executable in CLOCKLESS_EXECUTABLES]
    if clockless:
        out["clockless_nodes"] = clockless
    return out
