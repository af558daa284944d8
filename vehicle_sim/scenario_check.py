"""What every node of a run must agree on, checked before anything starts: the one ego vehicle
file, the one map, the one accident template and the one body frame.

A scenario declares its nodes once (vehicle_sim.graph), but each node reads the ego's vehicle
file and the map from its own parameters (its file, else its dataclass default): the dynamics
node integrates the ego with one vehicle file while the sensors' lever arms, the bridge's stack
controller, the ego driver, the accident node's box and the traffic's gaps to the ego use theirs,
and the recorder writes the map the report draws; the traffic node drives the accident
template's vehicles and the accident node names their collisions from its own; the dynamics
node names the body frame (``base_frame``) that the sensors mount on and the bridge takes
stack commands in. A scenario whose nodes disagree would run a different car (or map, scene,
or frame) in each node without a word;
``check_one_world`` refuses it with one line naming the node, its parameter and both values
(the runner exits 2, the launch file fails). It reads every node's parameters as the node
will (so a typo in a parameter file is refused here too, in one line, before anything
starts), and the traffic nodes' model file and the agents' car it names; a schedule of faults
needs the node that sends it (an accident node with the scenario); a sensor samples at most as
fast as the dynamics node publishes the states it reads. No ROS import.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vehicle_sim import graph
from vehicle_sim.core.accident.params import AccidentParams
from vehicle_sim.core.accident.template import load_template
from vehicle_sim.core.config import ConfigError, load
from vehicle_sim.core.dynamics_params import ODOM_IN_MAP_RULE, DynamicsParams
from vehicle_sim.core.frames import OdomInMap
from vehicle_sim.core.sensors.build import input_rate_problem, sensor_rate_hz
from vehicle_sim.core.sensors.node_params import SensorNodeParams
from vehicle_sim.core.traffic.mapfile import load_map
from vehicle_sim.core.traffic.node_params import TrafficNodeParams
from vehicle_sim.core.traffic.params import TrafficParams
from vehicle_sim.core.vehicle.params import load_vehicle
from vehicle_sim.docs import NODE_PARAMS
from vehicle_sim.engine_setup import core_args, core_params
from vehicle_sim.paths import config_path


@dataclass(frozen=True)
class Shared:
    """One thing every node of a run names alike: the node parameters that hold it."""

    names: tuple[str, ...]
    # a file: how it is read once here (a missing or malformed file: one ConfigError here, not
    # a failure in every node), compared as resolved paths; None: a name, compared as given
    read: Callable[[Path], Any] | None
    # '' (none used) is a value too: it disagrees with a node that names one (an accident
    # node without the traffic's template would report the scene's planned collisions as the
    # agents' own); else a node naming none is left out
    none_counts: bool = False


SHARED = {"ego vehicle file": Shared(tuple(sorted(set(graph.EGO_VEHICLE_PARAMS.values()))),
                                     load_vehicle),
          "map": Shared(("map_file",), load_map),
          "accident template": Shared(("accident_template",), load_template, none_counts=True),
          "body frame": Shared(("base_frame",), None, none_counts=True)}


def node_params(node: graph.NodeSpec, args: dict[str, str], scenario: graph.Scenario,
                graph_wiring: bool = True) -> Any:
    """The parameters ``node`` starts with, read and validated as it reads them (its file's
    ``/**`` then own section, the launch arguments, its dataclass defaults:
    engine_setup.core_params; a typo or a bad value is a ConfigError naming it); None for a
    program that is not a vehicle_sim node (foreign_executables). ``graph_wiring``: as a node
    of the graph (its peers and the nodes it waits for), False: as a core of the engine."""
    if node.executable not in graph.NODE_EXECUTABLES:
        return None
    cls = NODE_PARAMS.get(node.executable.removesuffix("_node"))
    return None if cls is None else core_params(cls, node, args, scenario, graph_wiring)


def check_one_world(scenario: graph.Scenario, args: dict[str, str]) -> dict[str, Any]:
    """ConfigError unless the active nodes of ``scenario`` with ``args`` name the same thing
    for each SHARED item (a file compared as a resolved path: relative to config/ or absolute;
    '' uses none), and that file reads; else the one of each item (None: no node names one)."""
    engine = args["engine"] == "true"  # the cores run in the engine, read as it reads them
    if engine:
        args = core_args(args)
    nodes = [(node, node_params(node, args, scenario, graph_wiring=not engine))
             for node in graph.active_nodes(scenario, args)]
    world = {what: _the_one(args["scenario"], nodes, what, item)
             for what, item in SHARED.items()}
    if scenario.schedule and not engine and not any(
            isinstance(params, AccidentParams) and params.scenario for _, params in nodes):
        raise ConfigError(f"scenario {args['scenario']}", "schedule",
                          f"{len(scenario.schedule)} entries, but no node sends them: give an "
                          "accident node the launch argument scenario (args: [scenario])")
    dynamics = next((params for _, params in nodes if isinstance(params, DynamicsParams)), None)
    for node, params in nodes:
        if isinstance(params, TrafficNodeParams):
            _check_agents_car(node, params)
        if isinstance(params, SensorNodeParams) and dynamics is not None:
            _check_sensor_input(node, params, dynamics)
        odom = getattr(params, "odom_in_map", OdomInMap())
        if isinstance(odom, OdomInMap) and odom != OdomInMap() and len(nodes) > 1:
            raise ConfigError(f"scenario {args['scenario']}", f"{node.name}.odom_in_map",
                              ODOM_IN_MAP_RULE)
    return world


def _the_one(scenario: str, nodes: list[tuple[graph.NodeSpec, Any]], what: str,
             item: Shared) -> Any:
    """The one value of ``item`` the nodes give (a file: its resolved path, read; None: no
    node names one); a ConfigError naming the first node that differs, its parameter and both
    values."""
    def key(value: str) -> Any:
        return config_path(value).resolve() if item.read is not None and value else value

    def shown(k: Any) -> str:
        return repr(k) if item.read is None or k == "" else _shown(k)
    first: tuple[str, str, Any] | None = None
    for node, params in nodes:
        for name in item.names:
            value = getattr(params, name, None)  # None: no such parameter (or not our node)
            if value is None or value == "" and not item.none_counts:
                continue
            if first is None:
                first = (node.name, name, key(str(value)))
            elif key(str(value)) != first[2]:
                raise ConfigError(f"scenario {scenario}", f"{node.name}.{name}",
                                  f"{shown(key(str(value)))} where {first[0]}.{first[1]} is "
                                  f"{shown(first[2])}: every node of a run uses one {what}")
    if first is None or first[2] == "":
        return None
    if item.read is not None:
        item.read(first[2])  # ConfigError naming the file when it is missing or malformed
    return first[2]


def _check_agents_car(node: graph.NodeSpec, params: TrafficNodeParams) -> None:
    """The traffic model file and the agents' car it names read (a ConfigError naming the node
    and the file, before the node would refuse to start with it)."""
    traffic = load(TrafficParams, config_path(params.params_file)) if params.params_file \
        else TrafficParams()
    try:
        load_vehicle(config_path(traffic.vehicle_file))
    except ConfigError as exc:
        raise ConfigError(f"scenario node {node.name} ({params.params_file or 'defaults'})",
                          "vehicle_file", f"the agents' car: {exc}") from None


def _check_sensor_input(node: graph.NodeSpec, params: SensorNodeParams,
                        dynamics: DynamicsParams) -> None:
    """A sensor node samples at most as fast as the states it reads (after its remappings)."""
    topic = params.state_topic
    for remap in node.remappings:
        source, _, target = remap.partition(":=")
        if source.strip("/") == topic.strip("/"):
            topic = target
    problem = input_rate_problem(sensor_rate_hz(params), topic, dynamics)
    if problem is not None:
        raise ConfigError(f"scenario node {node.name}", "rate_hz", problem)


def _shown(path: Path) -> str:
    """A config path as the files name it (relative to config/ where it lies there)."""
    try:
        return str(path.relative_to(config_path(".").resolve()))
    except ValueError:
        return str(path)
