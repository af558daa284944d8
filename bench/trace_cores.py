"""Trace of bench_lockstep_cores' Cores (dynamics + traffic + autopilot, seed 3): every autopilot
command and every snapshot's vector, saved to an .npz with their SHA-256, to check that a change
of the ego driver or the dynamics leaves the run identical bit for bit (issue 14).

Run it on two source trees and compare the files (``--compare a.npz b.npz``):

    PYTHONPATH=<tree> .venv/bin/python bench/trace_cores.py <tree> out.npz [seconds [ego seed]]
    .venv/bin/python bench/trace_cores.py --compare before.npz after.npz
"""
from __future__ import annotations

import hashlib
import importlib.util
import sys
from pathlib import Path

import numpy as np


def _cores_class(tree: Path):
    spec = importlib.util.spec_from_file_location(
        "bench_lockstep_cores", tree / "bench" / "bench_lockstep_cores.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.Cores, module.FRAME_STEPS


def trace(tree: Path, seconds: float, ego_seed: int | None = None) -> dict[str, np.ndarray]:
    """Run the Cores of ``tree`` for ``seconds`` of simulated time, recording as it goes
    (``ego_seed``: another seed of the ego's route than EgoDriverParams' default)."""
    cores_class, frame_steps = _cores_class(tree)
    cores = cores_class()
    if ego_seed is not None:
        from vehicle_sim.core.ego.autopilot import Autopilot
        from vehicle_sim.core.ego.params import EgoDriverParams

        a = cores.autopilot
        cores.autopilot = Autopilot(a.network, a.v, EgoDriverParams(seed=ego_seed))
    commands, refs, snaps, states = [], [], [], []
    update, snapshot, step = cores.autopilot.update, cores.model.snapshot, cores.loop.step

    def traced_update(*args):
        cmd = update(*args)
        commands.append([*args, cmd.steer_rad, cmd.throttle, cmd.brake, cmd.gear,
                         cmd.accel_mps2, cmd.s_m, cmd.lateral_m])
        refs.append(f"{cmd.reference}|{cmd.lane}")
        return cmd

    def traced_snapshot():
        snap = snapshot()
        snaps.append(snap.to_vector())
        return snap

    def traced_step(*args):
        step(*args)
        states.append(cores.model.state)

    cores.autopilot.update, cores.model.snapshot = traced_update, traced_snapshot
    cores.loop.step = traced_step
    for _ in range(round(seconds / (frame_steps * cores.p.dt_ns * 1e-9))):
        cores.frame()
    out = {"commands": np.array(commands, dtype=np.float64),
           "references": np.array(refs), "snapshots": np.array(snaps),
           "states": np.array(states)}
    digest = hashlib.sha256()
    for name in sorted(out):
        digest.update(out[name].tobytes())
    out["sha256"] = np.array(digest.hexdigest())
    return out


def compare(a_file: str, b_file: str) -> int:
    a, b = np.load(a_file), np.load(b_file)
    same = True
    for name in sorted(a.files):
        equal = a[name].shape == b[name].shape and np.array_equal(a[name], b[name])
        print(f"{name:12s} {a[name].shape} {'identical' if equal else 'DIFFERENT'}")
        same &= equal
    print(f"sha256 {a['sha256']} / {b['sha256']}")
    return 0 if same else 1


def main() -> int:
    if sys.argv[1] == "--compare":
        return compare(sys.argv[2], sys.argv[3])
    seconds = float(sys.argv[3]) if len(sys.argv) > 3 else 60.0
    ego_seed = int(sys.argv[4]) if len(sys.argv) > 4 else None
    out = trace(Path(sys.argv[1]), seconds, ego_seed)
    np.savez(sys.argv[2], **out)
    print(f"{len(out['commands'])} commands, {len(out['snapshots'])} snapshots, "
          f"{len(out['states'])} states, sha256 {out['sha256']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
