"""Markdown tables of every node's parameters, generated from the core dataclasses.

`python -m vehicle_sim.docs` prints them; README.md embeds the output between markers and a test
checks that it is current, so the README cannot drift from the code.
"""
from __future__ import annotations

from vehicle_sim.core.config import describe
from vehicle_sim.core.dynamics_params import DynamicsParams
from vehicle_sim.core.run_summary import MonitorParams

NODE_PARAMS = {"dynamics": DynamicsParams, "sim_monitor": MonitorParams}
BEGIN, END = "<!-- params:begin -->", "<!-- params:end -->"


def parameter_tables() -> str:
    out = [BEGIN]
    for node, cls in NODE_PARAMS.items():
        out += ["", f"**{node}** (`{cls.__module__}.{cls.__name__}`)", "",
                "| parameter | type | default | unit, meaning |", "|---|---|---|---|"]
        out += [f"| `{n}` | {t} | `{d}` | {m} |" for n, t, d, m in describe(cls)]
    out += ["", END]
    return "\n".join(out)


if __name__ == "__main__":
    print(parameter_tables())
