"""Markdown tables of every node's parameters, generated from the core dataclasses.

`python -m vehicle_sim.docs` prints them; README.md embeds the output between markers and a test
checks that it is current, so the README cannot drift from the code.
"""
from __future__ import annotations

from vehicle_sim.core.config import describe
from vehicle_sim.core.accident.params import AccidentParams
from vehicle_sim.core.dynamics_params import DynamicsParams
from vehicle_sim.core.ego.params import EgoDriverParams
from vehicle_sim.core.engine.params import EngineNodeParams
from vehicle_sim.core.motion.node_params import BridgeNodeParams
from vehicle_sim.core.run_summary import MonitorParams
from vehicle_sim.core.sensors.node_params import GpsNodeParams, ImuNodeParams
from vehicle_sim.core.traffic.node_params import TrafficNodeParams
from vehicle_sim.export.ground_truth_params import GroundTruthNodeParams
from vehicle_sim.graph import LAUNCH_ARGS
from vehicle_sim.recording import RecorderParams

NODE_PARAMS = {"dynamics": DynamicsParams, "traffic": TrafficNodeParams,
               "imu": ImuNodeParams, "gps": GpsNodeParams,
               "bridge": BridgeNodeParams, "ego_driver": EgoDriverParams,
               "accident": AccidentParams, "ground_truth": GroundTruthNodeParams,
               "sim_monitor": MonitorParams, "recorder": RecorderParams,
               "engine": EngineNodeParams}
BEGIN, END = "<!-- params:begin -->", "<!-- params:end -->"
ARGS_BEGIN, ARGS_END = "<!-- args:begin -->", "<!-- args:end -->"


def launch_argument_table() -> str:
    out = [ARGS_BEGIN, "", "| argument | default | meaning |", "|---|---|---|"]
    for a in LAUNCH_ARGS:
        choices = f" ({' / '.join(a.choices)})" if a.choices else ""
        out.append(f"| `{a.name}` | `{a.default}` | {a.description}{choices} |")
    return "\n".join(out + ["", ARGS_END])


def parameter_tables() -> str:
    out = [BEGIN]
    for node, cls in NODE_PARAMS.items():
        out += ["", f"**{node}** (`{cls.__module__}.{cls.__name__}`)", "",
                "| parameter | type | default | unit, meaning |", "|---|---|---|---|"]
        out += [f"| `{n}` | {t} | `{d}` | {m} |" for n, t, d, m in describe(cls)]
    out += ["", END]
    return "\n".join(out)


def current_blocks() -> dict[tuple[str, str], str]:
    """(begin, end) marker pairs and the text that belongs between them in README.md."""
    return {(ARGS_BEGIN, ARGS_END): launch_argument_table(), (BEGIN, END): parameter_tables()}


def update(text: str) -> str:
    """``text`` with every generated block replaced by its current content."""
    for (begin, end), block in current_blocks().items():
        head, _, rest = text.partition(begin)
        _, _, tail = rest.partition(end)
        text = head + block + tail
    return text


if __name__ == "__main__":
    import sys
    from pathlib import Path

    if len(sys.argv) == 3 and sys.argv[1] == "--write":
        path = Path(sys.argv[2])
        path.write_text(update(path.read_text()))
    else:
        print(launch_argument_table())
        print(parameter_tables())
