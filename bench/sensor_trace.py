"""Every output of the IMU and GNSS models over ~60 s of varied inputs, and one hash of them all:
run it on two source trees and compare, to show a change of the models kept their outputs bit
for bit (the same seed, the same inputs, the same numbers).

    PYTHONPATH=<tree> .venv/bin/python bench/sensor_trace.py [--out trace.txt]

Inputs, cached in ``--inputs`` (default /tmp/sensor_trace_inputs.npz) so that both runs read the
same states: 60 s of the urban scenario's ego (the lockstep engine: raw states at 200 Hz,
states at 100 Hz) and 60 s of a synthetic drive at 1 kHz (launch, slalom, hard braking, bumps
with roll, pitch and heave, a standstill with exact zeros, a 0.37 s gap with no call, repeated
stamps). Every preset, hand-made parameter sets with every error term on (lever arms, mounting
rotation, saturation, quantisation, orientation, multipath zones, outages, latency), seeds as
integers and as Generators, and a fault timeline (bias steps, freeze, dropout, noise scale 0 and
> 1, position jumps, no fix; through FaultBook + ``faults.apply`` as the nodes do and by direct
field writes), a NaN state and a backwards stamp (the exception text is recorded).

One line per call: the configuration, the call, and every field of every output with floats and
arrays as hex bytes (so -0.0, NaN payloads and dtypes count). Prints the sha256 of all lines.
"""
from __future__ import annotations

import argparse
import dataclasses
import hashlib
import math
from pathlib import Path

import numpy as np

import vehicle_sim
from vehicle_sim.core.faults import FaultBook, FaultRequest
from vehicle_sim.core.sensors import (GnssModel, GnssParams, GnssZones, ImuModel, ImuParams,
                                      Polygon, TrueState)
from vehicle_sim.core.sensors.faults import check_gps, check_imu
from vehicle_sim.core.sensors.params import (AccelNoise, AxisError, GeoOrigin, GyroNoise,
                                             UrbanParams)

PRESETS = Path(__file__).resolve().parents[1] / "config" / "sensors"
NAMES = ("position_m", "rpy_rad", "velocity_mps", "angular_velocity_radps",
         "acceleration_mps2", "angular_acceleration_radps2")


def urban_inputs(seconds: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(t_s (N,), kind (N,): 0 a raw state (the IMU's), 1 a state (the GNSS's)) and the states
    (N, 6, 3) of the urban ego, from the lockstep engine (core.engine, seed 3)."""
    from vehicle_sim import graph
    from vehicle_sim.core.engine.urban import UrbanEngine
    from vehicle_sim.engine_setup import engine_params

    rows = []

    class Tap:
        def __getattr__(self, name):
            return lambda *args: None

        def vehicle(self, t_ns, snap, raw, state):
            values = np.array([getattr(snap, n) for n in NAMES])
            rows.extend((t_ns * 1e-9, kind, values) for kind, due in ((0, raw), (1, state))
                        if due)

    args = graph.resolve_args({"seed": "3", "mode": "lockstep"})
    engine = UrbanEngine(engine_params(graph.load_scenario("urban"), args), Tap())
    for _ in range(round(seconds / 0.02)):
        engine.frame()
    engine.close()
    t = np.array([r[0] for r in rows])
    kind = np.array([r[1] for r in rows])
    return t, kind, np.stack([r[2] for r in rows])


def synthetic_inputs(seconds: float) -> tuple[np.ndarray, np.ndarray]:
    """(t_s (N,), states (N, 6, 3)) of a synthetic drive at 1 kHz."""
    dt = 1e-3
    t = np.arange(round(seconds / dt)) * dt
    t = t[(t < 21.0) | (t >= 21.37)]  # a gap with no call
    t = np.sort(np.concatenate([t, t[::997]]))  # repeated stamps
    x = y = yaw = 0.0
    out = np.zeros((len(t), 6, 3))
    prev = 0.0
    for i, ti in enumerate(t):
        h = ti - prev
        prev = ti
        speed = min(ti, 8.0) * 2.0 if ti < 40.0 else max(16.0 - 8.0 * (ti - 40.0), 0.0)
        accel = (2.0 if ti < 8.0 else 0.0) if ti < 40.0 else (-8.0 if speed > 0.0 else 0.0)
        rate = 0.3 * math.sin(0.8 * ti) if 10.0 < ti < 30.0 else 0.0
        rate_dot = 0.24 * math.cos(0.8 * ti) if 10.0 < ti < 30.0 else 0.0
        bump = 30.0 < ti < 36.0
        roll = 0.03 * math.sin(7.0 * ti) if bump else 0.0
        pitch = 0.02 * math.sin(5.0 * ti) - 0.01 if bump else (-0.0 if ti > 50.0 else 0.0)
        heave = 3.0 * math.sin(11.0 * ti) if bump else 0.0
        yaw += rate * h
        x += speed * math.cos(yaw) * h
        y += speed * math.sin(yaw) * h
        wx = 0.21 * math.cos(7.0 * ti) if bump else 0.0
        wy = 0.1 * math.cos(5.0 * ti) if bump else 0.0
        out[i] = [[x, y, 0.1 * heave / 9.0], [roll, pitch, yaw], [speed, 0.02 * rate, 0.0],
                  [wx, wy, rate], [accel, rate * speed, heave],
                  [-1.47 * math.sin(7.0 * ti) if bump else 0.0, 0.0, rate_dot]]
    if len(t) > 2000:
        out[1800:1900] = 0.0  # exact zeros (a standstill at the origin)
        out[1900:1950] = -0.0
    return t, out


def load_inputs(path: Path) -> dict[str, np.ndarray]:
    if not path.exists():
        ut, kind, us = urban_inputs(60.0)
        st, ss = synthetic_inputs(60.0)
        np.savez(path, ut=ut, kind=kind, us=us, st=st, ss=ss)
    with np.load(path) as f:
        return {k: f[k] for k in f.files}


def enc(x) -> str:
    """Exact text of a value: type and bits."""
    if x is None:
        return "None"
    if isinstance(x, np.ndarray):
        return f"nd{x.dtype}{x.shape}:{x.tobytes().hex()}"
    if isinstance(x, (float, np.floating)):
        return f"{type(x).__name__}:{float(x).hex()}"
    if isinstance(x, (bool, int, str, np.integer, np.bool_)):
        return f"{type(x).__name__}:{x!r}"
    if dataclasses.is_dataclass(x):
        return type(x).__name__ + "(" + ",".join(
            f"{f.name}={enc(getattr(x, f.name))}" for f in dataclasses.fields(x)) + ")"
    if isinstance(x, (list, tuple)):
        return "[" + ",".join(enc(v) for v in x) + "]"
    raise TypeError(type(x))


def state(v: np.ndarray, kind: str = "array") -> TrueState:
    """A TrueState of a (6, 3) row; ``kind`` 'tuple' gives plain tuples, 'f32' float32 arrays."""
    if kind == "tuple":
        return TrueState(*(tuple(float(c) for c in r) for r in v))
    if kind == "f32":
        return TrueState(*(r.astype(np.float32) for r in v))
    return TrueState(*(r.copy() for r in v))


# --- parameter sets -------------------------------------------------------------------------

def imu_everything() -> ImuParams:
    return ImuParams(
        rate_hz=400.0, lever_arm_m=(0.3, -0.2, 0.5), mounting_rpy_rad=(0.01, -0.02, 0.5),
        gyro=GyroNoise(noise_density=3e-4, bias_random_walk=4e-5, bias_gm_sigma=9e-4,
                       bias_gm_tau_s=500.0, turn_on_bias_sigma=8e-3, scale_factor_sigma=1e-3,
                       misalignment_sigma_rad=3e-4, range_radps=0.25, resolution_radps=1e-3),
        accel=AccelNoise(noise_density=4e-3, bias_random_walk=6e-3, bias_gm_sigma=7e-2,
                         bias_gm_tau_s=300.0, turn_on_bias_sigma=0.2, scale_factor_sigma=2e-3,
                         misalignment_sigma_rad=3e-4, range_mps2=12.0, resolution_mps2=8e-3),
        orientation_enabled=True, orientation_sigma_rad=0.01)


def imu_configs():
    yield "imu adis seed 3", ImuModel.from_file(PRESETS / "imu_adis16448.yaml", 3)
    gen = np.random.default_rng(np.random.SeedSequence([7, 1]))
    yield "imu mems generator", ImuModel.from_file(PRESETS / "imu_mems_consumer.yaml", gen)
    yield "imu everything", ImuModel(imu_everything(), 11)
    p = imu_everything()  # the same without quantisation and saturation: every bit shows
    raw = dataclasses.replace(
        p, gyro=dataclasses.replace(p.gyro, range_radps=1e3, resolution_radps=0.0),
        accel=dataclasses.replace(p.accel, range_mps2=1e3, resolution_mps2=0.0))
    yield "imu everything unquantised", ImuModel(raw, 12)
    yield "imu orientation exact", ImuModel(ImuParams(orientation_enabled=True,
                                                      mounting_rpy_rad=(0.0, 0.0, 1.0)), 5)
    yield "imu default", ImuModel(ImuParams(), 0)
    yield "imu quantised exact", ImuModel(ImuParams(gyro=GyroNoise(resolution_radps=1e-3),
                                                    accel=AccelNoise(resolution_mps2=1e-2)), 1)
    yield "imu white only 100 Hz", ImuModel(ImuParams(rate_hz=100.0, gyro=GyroNoise(
        noise_density=1e-3), accel=AccelNoise(bias_random_walk=1e-2)), 2)


def zones_along(path_xy: np.ndarray) -> GnssZones:
    """Square buildings beside the path every ~400 samples and an outage over one stretch."""
    blocks = []
    for i in range(0, len(path_xy), 400):
        x, y = path_xy[i]
        cx, cy = x + 14.0 * (-1) ** (i // 400), y + 9.0
        blocks.append(Polygon(((cx - 8, cy - 8), (cx + 8, cy - 8), (cx + 8, cy + 8),
                               (cx - 8, cy + 8))))
    x, y = path_xy[int(len(path_xy) * 0.4)]
    outage = Polygon(((x - 25, y - 25), (x + 25, y - 25), (x + 25, y + 25), (x - 25, y + 25)))
    return GnssZones(buildings=tuple(blocks), outages=(outage,))


def gnss_custom(**kw) -> GnssParams:
    base = dict(rate_hz=5.0, latency_s=0.25, antenna_lever_arm_m=(-0.5, 0.1, 1.4),
                origin=GeoOrigin(48.137, 11.575, 520.0),
                horizontal=AxisError(0.4, 1.2, 60.0), vertical=AxisError(0.7, 2.0, 60.0),
                urban=UrbanParams(distance_m=6.0, sigma_scale=2.5, jump_rate_hz=2.0,
                                  jump_sigma_m=5.0),
                outage_mode="no_output", velocity_enabled=False)
    base.update(kw)
    return GnssParams(**base)


def gnss_configs(zones: GnssZones):
    yield "gnss consumer seed 3", GnssModel.from_file(PRESETS / "gnss_consumer.yaml", 3)
    yield "gnss consumer zones", GnssModel.from_file(PRESETS / "gnss_consumer.yaml", 4, zones)
    gen = np.random.default_rng(np.random.SeedSequence([7, 2]))
    yield "gnss rtk generator zones", GnssModel.from_file(PRESETS / "gnss_rtk.yaml", gen, zones)
    yield "gnss custom zones", GnssModel(gnss_custom(), 9, zones)
    yield "gnss custom velocity", GnssModel(gnss_custom(velocity_enabled=True,
                                                        outage_mode="no_fix"), 10, zones)
    yield "gnss default", GnssModel(GnssParams(), 0)


# --- fault timelines ------------------------------------------------------------------------

IMU_FAULTS = [
    (5.0, FaultRequest(1, "bias_step", "accel_x", 0.5)),
    (8.0, FaultRequest(2, "bias_step", "gyro_z", -0.01)),
    (10.0, FaultRequest(3, "noise_scale", value=3.0)),
    (12.0, FaultRequest(4, "noise_scale", value=0.0)),
    (14.0, FaultRequest(4, "clear")),
    (16.0, FaultRequest(5, "freeze")),
    (18.0, FaultRequest(5, "clear")),
    (20.0, FaultRequest(6, "dropout", duration_s=2.0)),
    (25.0, FaultRequest(7, "noise_scale", value=2.5, duration_s=3.0)),
    (26.0, FaultRequest(8, "bias_step", "accel_z", 900.0)),
    (27.0, FaultRequest(9, "bias_step", "gyro_x", -99.0)),
    (29.0, FaultRequest(0, "clear")),
    (40.0, FaultRequest(10, "freeze")),
    (40.5, FaultRequest(11, "dropout")),
    (42.0, FaultRequest(0, "clear")),
]
GNSS_FAULTS = [
    (4.0, FaultRequest(1, "position_jump", vector=(30.0, -12.5, 3.0))),
    (7.0, FaultRequest(2, "noise_scale", value=4.0)),
    (9.0, FaultRequest(3, "noise_scale", value=0.0, duration_s=1.5)),
    (13.0, FaultRequest(4, "freeze")),
    (15.0, FaultRequest(4, "clear")),
    (17.0, FaultRequest(5, "no_fix", duration_s=2.0)),
    (22.0, FaultRequest(6, "dropout", duration_s=1.0)),
    (26.0, FaultRequest(7, "freeze")),
    (26.5, FaultRequest(8, "no_fix")),
    (28.0, FaultRequest(0, "clear")),
    (33.0, FaultRequest(9, "position_jump", vector=(-1e5, 5.0, -7.0))),
    (35.0, FaultRequest(0, "clear")),
]


def direct_faults(model, t_s: float) -> None:
    """Field writes between samples, as a test or a script would do."""
    f = model.faults
    if isinstance(model, ImuModel):
        if math.isclose(t_s, 45.0, abs_tol=1e-9):
            f.set_bias_step((0.1, -0.2, 0.3), (0.001, 0.0, -0.002))
        elif math.isclose(t_s, 47.0, abs_tol=1e-9):
            f.set_noise_scale(0.5)
            f.freeze = True
        elif math.isclose(t_s, 48.0, abs_tol=1e-9):
            f.clear()
    else:
        if math.isclose(t_s, 45.0, abs_tol=1e-9):
            f.set_position_jump((1.0, 2.0, 3.0))
            f.no_fix = False
        elif math.isclose(t_s, 47.0, abs_tol=1e-9):
            f.no_fix = True
        elif math.isclose(t_s, 48.0, abs_tol=1e-9):
            f.clear()


class Driver:
    """Feeds one model a stream of (t, state) and records every output line."""

    def __init__(self, name: str, model, timeline, check, lines: list[str]):
        self.name, self.model, self.lines = name, model, lines
        self.book = FaultBook("imu" if check is check_imu else "gps", check)
        self.timeline = list(timeline)
        self.prev = None
        self.n = 0

    def call(self, t_s: float, st) -> None:
        t_ns = round(t_s * 1e9)
        changed = bool(self.book.expire(t_ns))
        while self.timeline and self.timeline[0][0] <= t_s + 1e-12:
            self.book.command(self.timeline.pop(0)[1], t_ns)
            changed = True
        if changed:
            self.model.faults.apply(list(self.book.active.values()))
        direct_faults(self.model, t_s)
        try:
            out = self.model.update(t_s, st)
            text = enc(out)
            same = out is not None and out is self.prev and not isinstance(out, list)
            self.prev = out if out is not None else self.prev
        except ValueError as e:
            text, same = f"ValueError:{e}", False
        self.lines.append(f"{self.name}|{self.n}|{float(t_s).hex()}|{int(same)}|{text}")
        self.n += 1

    def finish(self) -> None:
        self.lines.append(f"{self.name}|end|{enc(self.model.faults)}|"
                          f"{self.model.rng.bit_generator.state}")


def run(inputs: dict[str, np.ndarray]) -> list[str]:
    lines: list[str] = []
    ut, kind, us, st, ss = (inputs[k] for k in ("ut", "kind", "us", "st", "ss"))
    zones = zones_along(np.concatenate([us[:, 0, :2], ss[:, 0, :2]]))
    n0 = len(st) // 30 * 10  # a third in, a multiple of the GNSS stride
    bad = {n0 + k: "nan" for k in (0, 1, 2, 3, 4, 5, 10, 20, 30, 40, 50, 60)}
    bad[n0 + 70] = "back"
    for src, t_all, states, pick in (("urban", ut, us, kind == 0), ("synth", st, ss, None)):
        for name, model in imu_configs():
            d = Driver(f"{src} {name}", model, IMU_FAULTS, check_imu, lines)
            feed(d, t_all, states, pick, bad if src == "synth" else {}, stride=1)
            d.finish()
        for name, model in gnss_configs(zones):
            d = Driver(f"{src} {name}", model, GNSS_FAULTS, check_gps, lines)
            feed(d, t_all, states, None if pick is None else kind == 1,
                 bad if src == "synth" else {}, stride=1 if pick is not None else 10)
            d.finish()
    return lines


def feed(d: Driver, t_all, states, pick, bad: dict[int, str], stride: int) -> None:
    kinds = ("array", "tuple", "f32")
    idx = np.flatnonzero(pick) if pick is not None else np.arange(0, len(t_all), stride)
    for j, i in enumerate(idx):
        t_s = float(t_all[i])
        if bad.get(i) == "nan":
            v = states[i].copy()
            v[2, 1] = np.nan
            d.call(t_s, state(v))
            continue
        if bad.get(i) == "back":
            d.call(t_s - 0.5, state(states[i]))
        # mostly arrays; every 50th call tuples, every 77th float32 arrays
        k = 1 if j % 50 == 49 else (2 if j % 77 == 76 else 0)
        d.call(t_s, state(states[i], kinds[k]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--inputs", type=Path, default=Path("/tmp/sensor_trace_inputs.npz"))
    ap.add_argument("--out", type=Path, default=None, help="write every line here")
    a = ap.parse_args()
    inputs = load_inputs(a.inputs)
    lines = run(inputs)
    digest = hashlib.sha256("\n".join(lines).encode()).hexdigest()
    if a.out is not None:
        a.out.write_text("\n".join(lines) + "\n")
    outputs = sum(1 for ln in lines if "|None" not in ln and "|[]" not in ln)
    print(f"vehicle_sim from {Path(vehicle_sim.__file__).parent}")
    print(f"{len(lines)} calls, {outputs} with an output; sha256 {digest}")


if __name__ == "__main__":
    main()
