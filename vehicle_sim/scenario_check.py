"""What every node of a run must agree on, checked before anything starts: the one ego vehicle
file and the one map.

A scenario declares its nodes once (vehicle_sim.graph), but each node reads the ego's vehicle
file and the map from its own parameters (its file, else its dataclass default): the dynamics
node integrates the ego with one vehicle file while the sensors' lever arms, the bridge's stack
controller, the ego driver, the accident node's box and the traffic's gaps to the ego use theirs,
and the recorder writes the map the report draws. A scenario whose nodes disagree would run a
different car (or map) in each node without a word; ``check_one_world`` refuses it with one
line naming the node, its parameter and both values (the runner exits 2, the launch file
fails). No ROS import.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from vehicle_sim import graph
from vehicle_sim.core.config import ConfigError, flat_fields
from vehicle_sim.core.traffic.mapfile import load_map
from vehicle_sim.core.vehicle.params import load_vehicle
from vehicle_sim.docs import NODE_PARAMS
from vehicle_sim.engine_setup import file_parameters
from vehicle_sim.paths import config_path

# what is shared, the node parameters that hold it, and how the one file is read (a missing or
# malformed file: one ConfigError here, not a failure in every node)
SHARED = {"ego vehicle file": (tuple(sorted(set(graph.EGO_VEHICLE_PARAMS.values()))),
                               load_vehicle),
          "map": (("map_file",), load_map)}


def node_value(node: graph.NodeSpec, name: str, args: dict[str, str],
               scenario: graph.Scenario) -> Any:
    """The value parameter ``name`` of ``node`` takes as the node starts (a launch argument, its
    parameter file's ``/**`` then own section, its dataclass default); None if the node has no
    such parameter (or is not a vehicle_sim node)."""
    if node.executable not in graph.NODE_EXECUTABLES:  # another program (foreign_executables)
        return None
    cls = NODE_PARAMS.get(node.executable.removesuffix("_node"))
    defaults = {n: default for n, _, default, _ in flat_fields(cls)} if cls else {}
    if name not in defaults:
        return None
    given = graph.node_parameters(node, args, scenario)
    if name in given:
        return given[name]
    return file_parameters(node).get(name, defaults[name])


def check_one_world(scenario: graph.Scenario, args: dict[str, str]) -> None:
    """ConfigError unless the active nodes of ``scenario`` with ``args`` name the same file for
    each SHARED item (compared as resolved paths: relative to config/ or absolute; '' uses
    none), and that file reads."""
    for what, (names, read) in SHARED.items():
        first: tuple[str, str, Path] | None = None
        for node in graph.active_nodes(scenario, args):
            for name in names:
                value = node_value(node, name, args, scenario)
                if value is None or value == "":  # no such parameter, or none used ('')
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
        if first is not None:
            read(first[2])  # ConfigError naming the file when it is missing or malformed


def _shown(path: Path) -> str:
    """A config path as the files name it (relative to config/ where it lies there)."""
    try:
        return str(path.relative_to(config_path(".").resolve()))
    except ValueError:
        return str(path)
