"""The lockstep engine's parameters, read from a scenario's ONE declaration (vehicle_sim.graph):
each core gets what its node would get, its parameter file (the ``/**`` section, then its own
name's, as rcl reads them) and the parameters the scenario passes from launch arguments, typed
and validated by the node's own dataclass (an unknown name or a bad value: ConfigError naming
it, as at a node's start). No ROS import.

The engine runs the scenario's dynamics, traffic, ego driver, imu and gps nodes, and its accident
node if it has one, as cores (one of each); a scenario without them, with more than one traffic
node (shards) or with a schedule of faults is refused: the engine cannot run it as the graph
would. With ``record true`` it records its own edges with the parameters of the scenario's
recorder node, read the same way (recorder_params).
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vehicle_sim import graph
from vehicle_sim.core.accident.params import AccidentParams
from vehicle_sim.core.config import ConfigError, build_flat, flat_fields, load_yaml, ros_owned
from vehicle_sim.core.dynamics_params import DynamicsParams
from vehicle_sim.core.ego.params import EgoDriverParams
from vehicle_sim.core.engine.params import EngineParams
from vehicle_sim.core.sensors.node_params import GpsNodeParams, ImuNodeParams
from vehicle_sim.core.traffic.node_params import TrafficNodeParams
from vehicle_sim.recording import RecorderParams

# the executables the engine runs as cores, and each one's parameters
CORES = {"dynamics_node": ("dynamics", DynamicsParams), "traffic_node": ("traffic",
                                                                          TrafficNodeParams),
         "ego_driver_node": ("ego_driver", EgoDriverParams),
         "imu_node": ("imu", ImuNodeParams), "gps_node": ("gps", GpsNodeParams),
         "accident_node": ("accident", AccidentParams)}
OPTIONAL = frozenset({"accident_node"})  # cores a scenario may leave out
# what the engine leaves out, and why (refused: the engine's run would not be the graph's)
LEFT_OUT = {"bridge_node": "no rig and no stack: the autopilot drives the ego directly",
            "sim_monitor": "the engine writes the run summary itself",
            "recorder_node": "the engine records its own edges (record true)",
            "ground_truth_node": "runs beside the engine, reading its edges (graph."
                                 "ENGINE_READERS): as fast as they come, not in lockstep"}


# what the graph gives its nodes to find each other (graph.node_parameters): not for cores
GRAPH_WIRING = frozenset({"wait_for_nodes", "clockless_nodes", "lockstep_peers",
                          "lockstep_graph", "lockstep", "lockstep_inputs"})


def flatten(data: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested parameter groups as dotted names (``initial: {x_m: 1}`` -> ``initial.x_m``)."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.update(flatten(value, f"{name}."))
        else:
            out[name] = value
    return out


def file_parameters(node: graph.NodeSpec) -> dict[str, Any]:
    """The node's parameters from its file: ``/**`` then its own section (``name`` or
    ``/name``), each ``ros__parameters`` and nothing else (a typo there is refused)."""
    path = graph.params_file(node)
    if path is None:
        return {}
    data = load_yaml(path)
    out: dict[str, Any] = {}
    for section in ("/**", node.name, f"/{node.name}"):
        node_section = data.get(section) or {}
        if not isinstance(node_section, Mapping):
            raise ConfigError(str(path), section, "is not a mapping (ros__parameters: ...)")
        for key in node_section:  # rcl refuses them in the node, which would then respawn
            if key != "ros__parameters":
                raise ConfigError(str(path), f"{section}.{key}", "unexpected: a node's section "
                                  "holds its parameters under ros__parameters")
        params = node_section.get("ros__parameters") or {}
        if not isinstance(params, Mapping):
            raise ConfigError(str(path), section, "ros__parameters is not a mapping")
        out.update(flatten(params))
    return out


def core_params(cls: type, node: graph.NodeSpec, args: dict[str, str],
                scenario: graph.Scenario, graph_wiring: bool = False) -> Any:
    """``cls`` built from what ``node`` would be given (module docstring); ``graph_wiring``:
    with the parameters the graph gives a node to find the others (GRAPH_WIRING), as a node of
    the graph starts, not a core of the engine."""
    known = {name for name, *_ in flat_fields(cls)}
    source = f"scenario node {node.name} ({node.params_file or 'no parameter file'})"
    values = {k: v for k, v in file_parameters(node).items() if not ros_owned(k)}
    unknown = sorted(set(values) - known)
    if unknown:
        raise ConfigError(source, unknown[0], f"unknown parameter (known: "
                          f"{', '.join(sorted(known))})")
    given = graph.node_parameters(node, args, scenario)
    values.update({k: v for k, v in given.items()
                   if k in known and (graph_wiring or k not in GRAPH_WIRING)})
    values = {k: tuple(v) if isinstance(v, list) else v for k, v in values.items()}
    return build_flat(cls, values, source=source)


def core_args(args: dict[str, str]) -> dict[str, str]:
    """The launch arguments the engine's cores are read with: mode fast (they wait for no peer:
    the engine orders them)."""
    return {**args, "mode": "fast"}


def engine_params(scenario: graph.Scenario, args: dict[str, str]) -> EngineParams:
    """The engine's parameters for ``scenario`` run with launch arguments ``args`` (resolved:
    graph.resolve_args); ConfigError when the engine cannot run it (module docstring)."""
    if scenario.schedule:
        raise ConfigError("scenario", "schedule", "the engine runs no fault schedule yet: run "
                          "the node graph (engine false)")
    args = core_args(args)
    found: dict[str, Any] = {}
    for node in graph.active_nodes(scenario, args):
        if node.executable not in CORES:
            continue
        field, cls = CORES[node.executable]
        if field in found:
            raise ConfigError("scenario", node.name, f"a second {node.executable}: the engine "
                              f"runs one of each (no shards)")
        found[field] = core_params(cls, node, args, scenario)
    missing = [exe for exe, (field, _) in CORES.items()
               if field not in found and exe not in OPTIONAL]
    if missing:
        raise ConfigError("scenario", "nodes", f"the engine needs {', '.join(missing)}")
    p = EngineParams(**found)
    check_rates(p)
    return p


def recorder_params(scenario: graph.Scenario, args: dict[str, str]) -> RecorderParams | None:
    """What the scenario's recorder node would record (its parameters, read as a core's), or
    None when it starts none (record false, or no recorder node declared)."""
    recorders = [n for n in graph.active_nodes(scenario, args)
                 if n.executable == "recorder_node"]
    if len(recorders) > 1:
        raise ConfigError("scenario", recorders[1].name, "a second recorder_node: the engine "
                          "writes one recording")
    return core_params(RecorderParams, recorders[0], args, scenario) if recorders else None


def check_rates(p: EngineParams) -> None:
    """What the engine steps on the physics grid must lie on it (a traffic or control period
    that is not a whole number of physics steps would never fire), and the sensors read the
    states the engine gives them (the IMU the raw state, the GNSS the state)."""
    dt_ns = p.dynamics.dt_ns
    for name, period_ns in (("traffic rate_hz", p.traffic.dt_ns),
                            ("ego_driver control_rate_hz",
                             round(1e9 / p.ego_driver.control_rate_hz))):
        if period_ns % dt_ns:
            raise ConfigError("scenario", name, f"a period of {period_ns} ns is not a whole "
                              f"number of physics steps ({dt_ns} ns): the engine cannot run it")
    for name, topic, want in (("imu", p.imu.state_topic, "vehicle/state_raw"),
                              ("gps", p.gps.state_topic, "vehicle/state")):
        if topic != want:
            raise ConfigError("scenario", f"{name} state_topic", f"{topic!r}: the engine feeds "
                              f"the {name} model the states of {want} only")


def left_out(scenario: graph.Scenario, args: dict[str, str]) -> list[str]:
    """One line per active node the engine does not run, and why."""
    return [f"{n.name} ({n.executable}): {LEFT_OUT.get(n.executable, 'not an engine core')}"
            for n in graph.active_nodes(scenario, args) if n.executable not in CORES]
