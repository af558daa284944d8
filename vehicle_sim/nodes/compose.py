"""vehicle_sim_compose: several vehicle_sim nodes in one process, one executor.

    vehicle_sim_compose imu_node --ros-args -r __node:=imu ... -- gps_node --ros-args ... --

Each node comes as its executable's name and its own ROS arguments (name, parameter file,
parameters, remappings), ended by ``--``; what follows the last section is the process's own
ROS arguments (logging). The runner and the launch file write these sections from one
scenario declaration (graph.compose_arguments, a node's ``process``). Fewer processes compete
for the cores of a small machine (issue 14); the nodes still talk over DDS as before, and a
user splits them again by removing ``process`` from the scenario.
"""
from __future__ import annotations

import importlib
import sys

from vehicle_sim.graph import NODE_EXECUTABLES
from vehicle_sim.nodes.main import NodeEntry, run_nodes

# executable -> module with its ENTRY (the [project.scripts] of pyproject.toml, less the runner)
MODULES = {exe: f"vehicle_sim.nodes.{exe}" for exe in NODE_EXECUTABLES}
MODULES["sim_monitor"] = "vehicle_sim.nodes.monitor_node"


def split(argv: list[str]) -> tuple[list[tuple[str, list[str]]], list[str]]:
    """(executable, its ROS arguments) per node section, and the process's own arguments.
    Raises ValueError naming what is malformed."""
    members: list[tuple[str, list[str]]] = []
    rest = list(argv)
    while rest and rest[0] != "--ros-args":
        exe = rest.pop(0)
        if exe not in MODULES:
            raise ValueError(f"{exe!r} is not a vehicle_sim node executable (one of "
                             f"{', '.join(MODULES)})")
        if "--" not in rest:
            raise ValueError(f"the arguments of {exe} are not ended by '--'")
        end = rest.index("--")
        if end and rest[0] != "--ros-args":
            raise ValueError(f"the arguments of {exe} must start with --ros-args, got "
                             f"{rest[0]!r}")
        members.append((exe, rest[:end]))
        rest = rest[end + 1:]
    if not members:
        raise ValueError("no node to run (usage: vehicle_sim_compose <executable> --ros-args "
                         "... -- [<executable> ... --] [--ros-args <process arguments>])")
    return members, rest


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        members, own = split(argv)
    except ValueError as exc:
        print(f"vehicle_sim_compose: {exc}", file=sys.stderr)
        return 2
    entries: list[tuple[NodeEntry, list[str]]] = [
        (importlib.import_module(MODULES[exe]).ENTRY, args) for exe, args in members]
    return run_nodes(entries, ["vehicle_sim_compose", *own])


if __name__ == "__main__":
    sys.exit(main())
