"""How long a large file takes to read (core.ros_yaml), libyaml against the pure-Python reader.

Builds a zone file of N outage vertices (default 200,000, about 4.9 M characters: half the
config.MAX_FILE_CHARS a file may have) and reads it with both readers in turn, ``--runs`` times
each, alternating so that a drifting machine affects both alike. Prints the median seconds of
each, their ratio and the load average (run on demand, not a test).

Usage: $VSIM_VENV/bin/python bench/bench_yaml_read.py [vertices] [--runs K]
"""
from __future__ import annotations

import argparse
import os
import statistics
import time

from vehicle_sim.core import ros_yaml


def zone_text(vertices: int) -> str:
    points = ", ".join(f"[{i * 0.37:.3f}, {i * 1.13:.3f}]" for i in range(vertices))
    return f"outages:\n  - vertices_m: [{points}]\n"


def timed_read(text: str) -> float:
    start = time.perf_counter()
    ros_yaml.read(text)
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("vertices", type=int, nargs="?", default=200_000)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    if ros_yaml._LIBYAML is None:
        raise SystemExit("PyYAML has no libyaml here: nothing to compare")
    text = zone_text(args.vertices)
    lib, pure, c_loader = [], [], ros_yaml._LIBYAML
    for _ in range(args.runs):
        lib.append(timed_read(text))
        ros_yaml._LIBYAML = None
        try:
            pure.append(timed_read(text))
        finally:
            ros_yaml._LIBYAML = c_loader
    lib_s, pure_s = statistics.median(lib), statistics.median(pure)
    print(f"{len(text):,} characters, {args.runs} runs each, load {os.getloadavg()[0]:.2f}")
    print(f"libyaml      {lib_s:7.2f} s (median)")
    print(f"pure Python  {pure_s:7.2f} s (median)")
    print(f"ratio        {pure_s / lib_s:7.2f} x faster with libyaml")


if __name__ == "__main__":
    main()
