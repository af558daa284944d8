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
needs the node that sends it (an accident node with the scenario). No ROS import.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from vehicle_sim import graph
from vehicle_sim.core.accident.params import AccidentParams
from vehicle_sim.core.accident.template import load_template
from vehicle_sim.core.config import ConfigError, load
from vehicle_sim.core.dynamics_params import ODOM_IN_MAP_RULE
from vehicle_sim.core.frames import OdomInMap
from vehicle_sim.core.traffic.mapfile import load_map
from vehicle_sim.core.traffic.node_params import TrafficNodeParams
from vehicle_sim.core.traffic.params import TrafficParams
from vehicle_sim.core.vehicle.params import load_vehicle
from vehicle_sim.docs import NODE_PARAMS
from vehicle_sim.engine_setup import core_args, core_params
from vehicle_sim.paths import config_path

# what is shared, the node parameters that hold it, and how the one file is read (a missing or
# malformed file: one ConfigError here, not a failure in every node)
SHARED = {"ego vehicle file": (tuple(sorted(set(graph.EGO_VEHICLE_PARAMS.values()))),
                               load_vehicle),
          "map": (("map_file",), load_map),
          "accident template": (("accident_template",), load_template)}
# items where a node that has the parameter but names none ('') disagrees with one that names
# a file: an accident node without the traffic's template would report the scene's planned
# collisions as the agents' own
NONE_DISAGREES = frozenset({"accident template"})
# what is shared by name, and the node parameter that holds it
SAME_NAME = {"body frame": "base_frame"}


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


def check_one_world(scenario: graph.Scenario, args: dict[str, str]) -> dict[str, Path | None]:
    """ConfigError unless the active nodes of ``scenario`` with ``args`` name the same file for
    each SHARED item (compared as resolved paths: relative to config/ or absolute; '' uses
    none), and that file reads; else the one file of each item (None: no node uses one)."""
    engine = args["engine"] == "true"  # the cores run in the engine, read as it reads them
    if engine:
        args = core_args(args)
    nodes = [(node, node_params(node, args, scenario, graph_wiring=not engine))
             for node in graph.active_nodes(scenario, args)]
    world: dict[str, Path | None] = {}
    for what, (names, read) in SHARED.items():
        first: tuple[str, str, Path] | None = None
        for node, params in nodes:
            for name in names:
                value = getattr(params, name, "")
                if value == "":  # no such parameter (or not a vehicle_sim node), or none used
                    continue
                path = config_path(str(value)).resolve()
                if first is None:
                    first = (node.name, name, path)
                elif path != first[2]:
                    raise ConfigError(f"scenario {args['scenario']}",
                                      f"{node.name}.{name}",
                                      f"{value} where {first[0]}.{first[1]} is "
                                      f"{_shown(first[2])}: every node of a run uses one "
                                      f"{what}")
        if first is not None and what in NONE_DISAGREES:
            _check_none_named(args, nodes, what, names[0], first)
        if first is not None:
            read(first[2])  # ConfigError naming the file when it is missing or malformed
        world[what] = None if first is None else first[2]
    for what, name in SAME_NAME.items():
        named = [(node.name, getattr(params, name)) for node, params in nodes
                 if hasattr(params, name)]
        for node_name, value in named[1:]:
            if value != named[0][1]:
                raise ConfigError(f"scenario {args['scenario']}", f"{node_name}.{name}",
                                  f"{value!r} where {named[0][0]}.{name} is {named[0][1]!r}: "
                                  f"every node of a run uses one {what}")
    if scenario.schedule and not engine and not any(
            isinstance(params, AccidentParams) and params.scenario for _, params in nodes):
        raise ConfigError(f"scenario {args['scenario']}", "schedule",
                          f"{len(scenario.schedule)} entries, but no node sends them: give an "
                          "accident node the launch argument scenario (args: [scenario])")
    for node, params in nodes:
        if isinstance(params, TrafficNodeParams):
            _check_agents_car(node, params)
        odom = getattr(params, "odom_in_map", OdomInMap())
        if isinstance(odom, OdomInMap) and odom != OdomInMap() and len(nodes) > 1:
            raise ConfigError(f"scenario {args['scenario']}", f"{node.name}.odom_in_map",
                              ODOM_IN_MAP_RULE)
    return world


def _check_none_named(args: dict[str, str], nodes: list, what: str, name: str,
                      first: tuple[str, str, Path]) -> None:
    """ConfigError for a node whose ``name`` parameter is '' while ``first`` names a file."""
    for node, params in nodes:
        if getattr(params, name, None) == "":
            raise ConfigError(f"scenario {args['scenario']}", f"{node.name}.{name}",
                              f"'' where {first[0]}.{first[1]} is {_shown(first[2])}: every "
                              f"node of a run uses one {what}")


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


def _shown(path: Path) -> str:
    """A config path as the files name it (relative to config/ where it lies there)."""
    try:
        return str(path.relative_to(config_path(".").resolve()))
    except ValueError:
        return str(path)
