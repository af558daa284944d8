"""The urban graph at real time with thousands of agents, against the shipped urban run.

For each agent count N the script writes, into a temporary folder, a grid map large enough for
N agents (core.traffic.gridgen: 12.5 agents per block, the density of config/maps/urban_grid),
a traffic model file with N initial agents (capacity N + 64, the control zone off: the whole
city is simulated), every node's parameter file with that map (scenario_check holds them to one
map) and a copy of config/scenarios/urban.yaml that names them; then it runs
``vehicle_sim_run --mode realtime`` on it and on the shipped urban scenario, alternated, and
prints per run what a user of thousands of agents watches (from the run summary and the log):
the vehicle states the monitor counted of those published, physics overruns and the worst
lateness p99, ego crashes, command timeouts, the "left out of" lines of agent sets too old for
their reader (agent_inputs), the traffic's skipped steps, and the ratios of the N-agent run to
the reference run; the load average before and after each run (the machine may be shared).

    .venv/bin/python bench/bench_many_agents.py [--agents 2000] [--seconds 40] [--runs 1]
"""
from __future__ import annotations

import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

from vehicle_sim.core.traffic.gridgen import GridSpec, generate
from vehicle_sim.paths import config_path

AGENTS_PER_BLOCK = 12.5  # urban_grid's density (a choice: its 4 x 4 blocks hold ~200 agents)
RUNNER = str(Path(sys.executable).parent / "vehicle_sim_run")
CRASH = re.compile(r"ego crash into ")
STALE = re.compile(r"are left out of ")
SKIPPED = re.compile(r"traffic behind sim time by \d+ steps: skipping (\d+)")
MAP_NODES = ("accident", "ego_driver", "ground_truth")  # their files name the map as it is


def city(folder: Path, agents: int) -> Path:
    """The scenario of ``agents`` agents in ``folder`` (module docstring); its path."""
    blocks = max(4, math.ceil(math.sqrt(agents / AGENTS_PER_BLOCK)))
    grid = folder / "city.yaml"
    grid.write_text(yaml.safe_dump(generate(GridSpec(blocks_x=blocks, blocks_y=blocks,
                                                     avenue_row=2)), sort_keys=False))
    model = folder / "traffic_model.yaml"
    model.write_text(yaml.safe_dump({"capacity": agents + 64, "initial_agents": agents,
                                     "zone": {"enabled": False}}))
    files = {"traffic": f"/**:\n  ros__parameters:\n    map_file: {grid}\n"
                        f"    params_file: {model}\n",
             "recorder": f"/**:\n  ros__parameters:\n    map_file: {grid}\n",
             "dynamics": config_path("dynamics.yaml").read_text().replace(
                 "    model: single_track", f"    model: single_track\n    map_file: {grid}")}
    for name in MAP_NODES:
        files[name] = config_path(f"{name}.yaml").read_text().replace("maps/urban_grid.yaml",
                                                                       str(grid))
    scenario = yaml.safe_load(config_path("scenarios/urban.yaml").read_text())
    for node in scenario["nodes"]:
        if node["name"] in files:
            path = folder / f"{node['name']}.yaml"
            path.write_text(files[node["name"]])
            node["params_file"] = str(path)
        elif node.get("params_file"):
            node["params_file"] = str(config_path(node["params_file"]))
    out = folder / "scenario.yaml"
    out.write_text(yaml.safe_dump(scenario, sort_keys=False))
    return out


def run(scenario: str, seconds: float, folder: Path) -> dict:
    """One real-time run: the figures of the module docstring."""
    load_before = os.getloadavg()[0]
    result = subprocess.run([RUNNER, "--scenario", scenario, "--mode", "realtime", "--duration",
                             f"{seconds:g}", "--record_dir", str(folder), "--timeout",
                             f"{seconds * 4 + 120:g}"], capture_output=True, text=True)
    log = result.stdout + result.stderr
    summaries = sorted(folder.glob("summary-*.json"))
    s = json.loads(summaries[-1].read_text()) if summaries else {}
    published = round(s.get("sim_time_s", 0.0) * 100)  # vehicle/state at 100 Hz
    return {"exit": result.returncode, "states_counted": s.get("state_samples", 0) /
            max(published, 1), "overruns": s.get("overruns", 0),
            "lateness_p99_max_ms": 1e3 * s.get("lateness_p99_max_s", 0.0),
            "ego_crashes": len(CRASH.findall(log)), "command_timeouts": s.get(
                "command_timeouts", 0), "stale_sets": len(STALE.findall(log)),
            "traffic_steps_skipped": sum(int(n) for n in SKIPPED.findall(log)),
            "agents_max": s.get("traffic_agents_max", 0), "load": (load_before,
                                                                    os.getloadavg()[0])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agents", type=int, default=2000)
    parser.add_argument("--seconds", type=float, default=40.0)
    parser.add_argument("--runs", type=int, default=1)
    a = parser.parse_args()
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    os.environ.setdefault("ROS_DOMAIN_ID", str(20 + os.getpid() % 40))
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        scenario = str(city(folder, a.agents))
        for k in range(a.runs):
            ref = run("urban", a.seconds, folder / f"ref{k}")
            many = run(scenario, a.seconds, folder / f"many{k}")
            print(f"run {k}: urban    {ref}")
            print(f"run {k}: {a.agents} agents {many}")
            print(f"run {k}: ratios {a.agents} / urban: states counted "
                  f"{many['states_counted'] / max(ref['states_counted'], 1e-9):.2f}, overruns "
                  f"{many['overruns']} / {ref['overruns']}, lateness p99 "
                  f"{many['lateness_p99_max_ms'] / max(ref['lateness_p99_max_ms'], 1e-9):.2f}")


if __name__ == "__main__":
    main()
