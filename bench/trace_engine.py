"""Every output of the lockstep engine (core.engine: the urban scenario's cores, seed 3) hashed in
order, to show that a change of a core leaves the run bit for bit the same (issue 14): run it on
two source trees and compare the printed hashes. The same records as test/core/test_engine.py,
which compares two runs of one tree.

    PYTHONPATH=<tree> .venv/bin/python bench/trace_engine.py [seconds, default 60] [seed, 3]
"""
from __future__ import annotations

import hashlib
import sys

from vehicle_sim import graph
from vehicle_sim.core.engine.urban import UrbanEngine
from vehicle_sim.engine_setup import engine_params


class Trace:
    """Each output's kind, stamp and values (floats as bytes) into one sha256, counted."""

    def __init__(self):
        self.hash, self.count = hashlib.sha256(), {}

    def _add(self, kind: str, t_ns: int, *parts) -> None:
        self.count[kind] = self.count.get(kind, 0) + 1
        self.hash.update(kind.encode() + int(t_ns).to_bytes(8, "little", signed=True))
        for part in parts:
            self.hash.update(part.tobytes() if hasattr(part, "tobytes") else repr(part).encode())

    def clock(self, t_ns):
        self._add("clock", t_ns)

    def vehicle(self, t_ns, snap, raw, state):
        self._add("vehicle", t_ns, snap.to_vector(), raw, state)

    def imu(self, t_ns, s):
        self._add("imu", t_ns, s.linear_acceleration_mps2, s.angular_velocity_radps)

    def fix(self, fix):
        self._add("fix", round(fix.stamp_s * 1e9), fix.latitude_deg, fix.longitude_deg,
                  fix.altitude_m)

    def traffic(self, t_ns, agents, lights):
        self._add("traffic", t_ns, *(agents[k] for k in sorted(agents)), lights[1])

    def command(self, t_ns, cmd):
        self._add("command", t_ns, cmd)

    def accident(self, event):
        self._add("accident", event.contact.t_ns, event)

    def damage(self, t_ns, impulse_ns, levels):
        self._add("damage", t_ns, impulse_ns, levels)

    def log(self, line):
        self._add("log", 0, line)


def main() -> None:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 60.0
    seed = sys.argv[2] if len(sys.argv) > 2 else "3"
    trace = Trace()
    args = graph.resolve_args({"seed": seed, "mode": "lockstep"})
    engine = UrbanEngine(engine_params(graph.load_scenario("urban"), args), trace)
    d = engine.p.dynamics
    for _ in range(round(seconds / (d.lockstep_frame_steps * d.dt_ns * 1e-9))):
        engine.frame()
    engine.close()
    print(f"{trace.hash.hexdigest()} {seconds:g} s seed {seed}: {trace.count}")


if __name__ == "__main__":
    main()
