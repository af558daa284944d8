"""Fuzz targets shared by test/fuzz (a few hundred cases each) and bench/bench_fuzz.py (>= 10,000).

Each target is a hypothesis strategy and a property function that raises AssertionError (or the
unexpected exception itself) when the core code misbehaves on that input. The properties:
- rig input packets and platform frames: a decoded value, or PacketError with a reason;
  SequenceTracker.accept never raises;
- driver and stack commands (VehicleControl; the controller path of cmd_vel, Ackermann and
  Autoware): never raise; rejected naming the field, or
  accepted with every field finite and within the limits;
- fault command sequences (imu, gps, vehicle): never raise; after every command the applied
  sensor faults are finite and within their bounds, a vehicle driven through its faults stays
  finite; every rejection says why;
- parameter, map and scenario files (mutated shipped files, random text): the only exception
  is ConfigError, one line, naming its source.
"""
from __future__ import annotations

import dataclasses
import math
import tempfile
from functools import lru_cache
from pathlib import Path

import numpy as np
from fuzz_link import check_link, link_case  # test/fuzz is on sys.path
from hypothesis import strategies as st

from vehicle_sim.core.accident.params import AccidentParams
from vehicle_sim.core.config import ConfigError, build, build_flat, flat_fields, load, load_yaml
from vehicle_sim.core.controls import ControlLimits, validate, validate_setpoint
from vehicle_sim.core.dynamics_params import DynamicsParams
from vehicle_sim.core.ego.params import EgoDriverParams
from vehicle_sim.core.faults import CLEAR, REJECTED, FaultBook, FaultRequest
from vehicle_sim.core.motion import wire
from vehicle_sim.core.motion.node_params import BridgeNodeParams
from vehicle_sim.core.motion.params import PlatformParams, WireParams
from vehicle_sim.core.run_summary import MonitorParams
from vehicle_sim.core.sensors.faults import (
    MAX_ACCEL_BIAS_STEP_MPS2,
    MAX_GYRO_BIAS_STEP_RADPS,
    MAX_NOISE_SCALE,
    MAX_POSITION_JUMP_M,
    GnssFaults,
    ImuFaults,
    check_gps,
    check_imu,
)
from vehicle_sim.core.sensors.node_params import GpsNodeParams, ImuNodeParams
from vehicle_sim.core.sensors.params import GnssParams, ImuParams
from vehicle_sim.core.traffic.gridgen import GridSpec, generate
from vehicle_sim.core.traffic.mapfile import MapSpec
from vehicle_sim.core.traffic.node_params import TrafficNodeParams
from vehicle_sim.core.vehicle.factory import make_model
from vehicle_sim.core.vehicle.faults import VehicleFaults
from vehicle_sim.core.vehicle.interface import Controls, NonFiniteState
from vehicle_sim.core.vehicle.params import VehicleParams
from vehicle_sim.engine_setup import flatten
from vehicle_sim.graph import Scenario

CONFIG = Path(__file__).resolve().parents[2] / "config"
KEY = b"fuzz-key-0123456789abcdef"

# ---------------------------------------------------------------- values

HOSTILE_FLOATS = (math.nan, math.inf, -math.inf, 1e308, -1e308, 5e-324, -5e-324, 0.0, -0.0,
                  1.7976931348623157e308, 2.0 ** 63, -1.0)
any_float = st.one_of(st.floats(allow_nan=True, allow_infinity=True, allow_subnormal=True),
                      st.sampled_from(HOSTILE_FLOATS))
# what a parameter or map file may hold where a number or name was expected
HOSTILE_VALUES = (math.nan, math.inf, -math.inf, 1e308, -1e308, 10 ** 400, -(10 ** 30), 2 ** 64,
                  -1, -1.5, 0, 0.0, 5e-324, "", "x", "nan", "a" * 300, None, True, False, [],
                  [[1, 2], [3]], [math.nan], {}, {"x": 1}, [1.0, 2.0, 3.0])
hostile_value = st.one_of(st.sampled_from(HOSTILE_VALUES), any_float,
                          st.integers(min_value=-(2 ** 70), max_value=2 ** 70),
                          st.text(max_size=20))


def _packet_problem(exc: wire.PacketError) -> None:
    assert isinstance(exc.reason, str) and exc.reason.strip(), f"no reason: {exc!r}"


# ---------------------------------------------------------------- 1. rig packets


def _valid_packet(fields: bytes, key: bytes | None) -> bytes:
    """A well-formed input packet whose 16 field bytes (sequence .. buttons) are ``fields``."""
    body = wire.INPUT_MAGIC + bytes([wire.INPUT_VERSION]) + fields
    packet = body + wire.crc16_ccitt(body).to_bytes(2, "big")
    return packet + wire.input_tag(packet, key) if key is not None else packet


@st.composite
def _mutated(draw, packet: bytes) -> bytes:
    """Bit flips, truncation, extension or byte overwrites of a valid packet."""
    data = bytearray(packet)
    for _ in range(draw(st.integers(0, 4))):
        op = draw(st.sampled_from(("flip", "truncate", "extend", "set")))
        if op == "flip" and data:
            i = draw(st.integers(0, len(data) - 1))
            data[i] ^= 1 << draw(st.integers(0, 7))
        elif op == "truncate":
            data = data[:draw(st.integers(0, len(data)))]
        elif op == "extend":
            data += draw(st.binary(min_size=1, max_size=40))
        elif op == "set" and data:
            data[draw(st.integers(0, len(data) - 1))] = draw(st.integers(0, 255))
    return bytes(data)


@st.composite
def rig_packet_case(draw):
    """(data, key, the packet again when it is known to be valid, else None)."""
    key = draw(st.sampled_from((None, KEY)))
    if draw(st.integers(0, 3)) == 0:
        data = draw(st.one_of(st.binary(max_size=64), st.binary(min_size=21, max_size=21),
                              st.binary(min_size=37, max_size=37),
                              st.sampled_from(("text", None, 21, [1, 2], bytearray(21)))))
        return data, key, None
    packet = _valid_packet(draw(st.binary(min_size=16, max_size=16)), key)
    mutated = draw(_mutated(packet))
    return mutated, key, (packet if mutated == packet else None)


def check_rig_packet(case) -> None:
    data, key, original = case
    try:
        got = wire.decode_input_packet(data, key=key)
    except wire.PacketError as exc:
        _packet_problem(exc)
        assert original is None, f"valid packet refused: {exc.reason}"
        return
    assert isinstance(got, wire.RigInput)
    if original is not None:  # every field survives: encoding the decoded input gives it back
        assert wire.encode_input_packet(got, key) == original, (got, original)


WIRES = (WireParams(format="binary"), WireParams(format="binary", bits=16, header=(0x7E,)),
         WireParams(format="binary", bits=12, header=(1, 2, 3)))


@st.composite
def platform_frame_case(draw):
    fmt = draw(st.sampled_from(WIRES))
    if draw(st.booleans()):
        return draw(st.binary(max_size=40)), fmt, None
    values = np.array(draw(st.lists(any_float, min_size=0, max_size=8)))
    seq = draw(st.integers(0, 255))
    frame = wire.encode_binary(values, seq, fmt)
    mutated = draw(_mutated(frame))
    return mutated, fmt, (seq if mutated == frame else None)


def check_platform_frame(case) -> None:
    data, fmt, seq = case
    try:
        got_seq, values = wire.decode_binary(data, fmt)
    except wire.PacketError as exc:
        _packet_problem(exc)
        assert seq is None, f"valid frame refused: {exc.reason}"
        return
    assert 0 <= got_seq <= 255 and np.all(np.isfinite(values))
    assert np.all((values >= 0.0) & (values <= 1.0)), values
    if seq is not None:
        assert got_seq == seq


sequence_case = st.tuples(
    st.one_of(any_float.filter(lambda x: not math.isnan(x)), st.sampled_from((math.nan, 0.1))),
    st.lists(st.tuples(st.integers(-(2 ** 40), 2 ** 40) | st.integers(0, 0xFFFF),
                       any_float | st.integers(-(2 ** 31), 2 ** 31)), max_size=30))


def check_sequence_tracker(case) -> None:
    resync_s, arrivals = case
    tracker = wire.SequenceTracker(resync_after_s=resync_s)
    for seq, now_s in arrivals:
        assert tracker.accept(seq, now_s) in (True, False)
    assert tracker.rejected >= 0 and tracker.restarts >= 0


# ---------------------------------------------------------------- 2. commands

LIMITS = ControlLimits(max_steer_rad=0.6, max_gear=6)
FIELD_NAMES = ("steering_angle", "throttle", "brake", "clutch", "gear", "speed_mps",
               "accel_mps2", "accel_limit_mps2", "steer_rad", "curvature_per_m",
               "steer_rate_radps")

control_case = st.tuples(any_float, any_float, any_float, any_float, st.integers(-128, 127),
                         st.booleans())
maybe_float = st.none() | any_float
# a stack command as the controller takes it, then the vehicle's speed and acceleration, fed
# for a few states 10 ms apart (the controller keeps its PI state between them)
setpoint_case = st.tuples(any_float, maybe_float, any_float, maybe_float, any_float, any_float,
                          st.none() | st.integers(-3, 9), any_float, any_float,
                          st.integers(1, 4))


def _check_validated(result) -> None:
    if result.controls is None:
        assert result.problem.startswith("rejected: "), result.problem
        assert any(name in result.problem for name in FIELD_NAMES), result.problem
        return
    c = result.controls
    for name in ("steer_rad", "throttle", "brake", "clutch"):
        assert math.isfinite(getattr(c, name)), (name, c)
    assert abs(c.steer_rad) <= LIMITS.max_steer_rad
    assert all(0.0 <= v <= 1.0 for v in (c.throttle, c.brake, c.clutch)), c
    assert isinstance(c.gear, int) and -1 <= c.gear <= LIMITS.max_gear
    assert isinstance(c.handbrake, bool)


def check_vehicle_control(case) -> None:
    steer, throttle, brake, clutch, gear, handbrake = case
    _check_validated(validate(steer, throttle, brake, clutch, gear, handbrake, LIMITS))


@lru_cache(maxsize=1)
def _stack_model():
    from vehicle_sim.core.motion.stack_controller import LongitudinalModel
    from vehicle_sim.core.vehicle.params import VehicleParams
    from vehicle_sim.paths import config_path
    return LongitudinalModel.from_vehicle(load(VehicleParams,
                                               config_path("vehicles/medium_car.yaml")))


def check_setpoint(case) -> None:
    """The stack command path (cmd_vel, Ackermann, Autoware): controller + validate_setpoint."""
    from vehicle_sim.core.motion.stack_controller import Measured, Setpoint, StackController
    speed, accel, limit, steer, curvature, rate, gear, v_mps, a_mps2, states = case
    sp = Setpoint(speed_mps=speed, accel_mps2=accel, accel_limit_mps2=limit, steer_rad=steer,
                  curvature_per_m=curvature, steer_rate_radps=rate, gear=gear)
    fields = {name: value for name, value in vars(sp).items()
              if isinstance(value, float)}
    ctl = StackController(_stack_model())
    for k in range(states):
        measured = Measured(v_mps if math.isfinite(v_mps) else 0.0,
                            a_mps2 if math.isfinite(a_mps2) else 0.0, k * 10_000_000)
        _check_validated(validate_setpoint(fields, lambda m=measured: ctl.step(sp, m), LIMITS))


# ---------------------------------------------------------------- 3. fault sequences

IMU_NAMES = ("bias_step", "freeze", "dropout", "noise_scale")
GPS_NAMES = ("freeze", "dropout", "noise_scale", "position_jump", "no_fix")
VEHICLE_NAMES = ("tyre_blowout", "brake_failure", "steering_stuck", "engine_cut")
CHANNELS = ("", "accel_x", "accel_y", "accel_z", "gyro_x", "gyro_y", "gyro_z", "fl", "fr", "rl",
            "rr", "front_left", "ACCEL_X", "x", "\x00")
fault_value = st.one_of(any_float, st.sampled_from((0.0, 0.5, 1.0, 2.0, 999.0, 1000.0, 1001.0,
                                                    -1000.0, 99.9, -100.0, 1e5, -1e5, 5e4)))
durations = st.one_of(st.sampled_from((0.0, 0.0, 0.001, 0.5, 1e6, 1e6 + 1, 1e300, -1.0,
                                       math.nan, math.inf, -0.0)),
                      st.floats(0.0, 10.0), any_float)


@st.composite
def fault_sequence(draw, kinds: tuple[str, ...]):
    """A list of ("command", FaultRequest) / ("expire", dt_ns) steps over a few ids."""
    kind = st.one_of(st.sampled_from((*kinds, CLEAR, "CLEAR", "bias_step", "no_fix",
                                      "tyre_blowout", "unknown", "", "fault 42")),
                     st.text(max_size=8))
    request = st.builds(FaultRequest, id=st.integers(0, 5) | st.integers(-(2 ** 31), 2 ** 32),
                        kind=kind, channel=st.sampled_from(CHANNELS) | st.text(max_size=5),
                        value=fault_value, duration_s=durations,
                        vector=st.tuples(fault_value, fault_value, fault_value))
    step = st.one_of(st.tuples(st.just("command"), request),
                     st.tuples(st.just("expire"), st.integers(0, 2 * 10 ** 9)))
    return draw(st.lists(step, min_size=1, max_size=25))


def _check_changes(changes) -> None:
    for change in changes:
        assert change.message.strip(), change
        if change.state == REJECTED:
            # a reason after the fault's name ("BIAS_STEP: value must be finite, got nan")
            assert len(change.message.split(": ", 1)) == 2, change.message


def _run_book(book, steps, after) -> None:
    t_ns = 0
    for what, arg in steps:
        if what == "command":
            _check_changes(book.command(arg, t_ns))
        else:
            t_ns += arg
            _check_changes(book.expire(t_ns))
        after()


def check_imu_faults(steps) -> None:
    book, faults = FaultBook("imu", check_imu), ImuFaults()

    def after() -> None:
        faults.apply(list(book.active.values()))
        assert np.all(np.abs(faults.accel_bias_step_mps2) <= MAX_ACCEL_BIAS_STEP_MPS2)
        assert np.all(np.abs(faults.gyro_bias_step_radps) <= MAX_GYRO_BIAS_STEP_RADPS)
        assert math.isfinite(faults.noise_scale) and 0.0 <= faults.noise_scale <= MAX_NOISE_SCALE
    _run_book(book, steps, after)


def check_gps_faults(steps) -> None:
    book, faults = FaultBook("gps", check_gps), GnssFaults()

    def after() -> None:
        faults.apply(list(book.active.values()))
        assert np.all(np.abs(faults.position_jump_enu_m) <= MAX_POSITION_JUMP_M)
        assert math.isfinite(faults.noise_scale) and 0.0 <= faults.noise_scale <= MAX_NOISE_SCALE
    _run_book(book, steps, after)


@lru_cache(maxsize=1)
def vehicle_params() -> VehicleParams:
    return load(VehicleParams, CONFIG / "vehicles" / "medium_car.yaml")


def check_vehicle_faults(case) -> None:
    steps, controls = case
    model = make_model("single_track", vehicle_params(), "rk4")
    model.reset(speed_mps=10.0)
    faults = VehicleFaults(model)
    t_ns = 0
    for what, arg in steps:
        if what == "command":
            _check_changes(faults.command(arg, t_ns, model.snapshot().steer_rad))
        else:
            _check_changes(faults.expire(t_ns + arg))
        for _ in range(3):
            applied = faults.apply(controls)
            for name in ("steer_rad", "throttle", "brake", "clutch"):
                assert math.isfinite(getattr(applied, name)), applied
            try:
                model.step(applied, 0.01)
            except NonFiniteState as exc:  # the model's own refusal: the state stays finite
                raise AssertionError(f"non-finite step with {applied}: {exc}") from None
            t_ns += 10_000_000
        model.snapshot().require_finite()


vehicle_fault_case = st.tuples(
    fault_sequence(VEHICLE_NAMES),
    st.builds(Controls, steer_rad=st.floats(-0.6, 0.6), throttle=st.floats(0, 1),
              brake=st.floats(0, 1), clutch=st.just(0.0), gear=st.integers(-1, 6),
              handbrake=st.booleans()))


# ---------------------------------------------------------------- 4. files


def _node_section(name: str) -> dict:
    data = load_yaml(CONFIG / f"{name}.yaml")
    return data.get("/**", {}).get("ros__parameters", {}) or {}


NODE_PARAMS = {"dynamics": DynamicsParams, "traffic": TrafficNodeParams,
               "bridge": BridgeNodeParams, "imu": ImuNodeParams, "gps": GpsNodeParams,
               "ego_driver": EgoDriverParams, "accident": AccidentParams, "monitor": MonitorParams}


@lru_cache(maxsize=1)
def shipped_files() -> dict[str, tuple[type, dict, str]]:
    """name -> (class, parsed shipped data, how it is built: "build" nested or "flat")."""
    files = {"vehicle medium_car": (VehicleParams, load_yaml(CONFIG / "vehicles/medium_car.yaml"),
                                    "build"),
             "scenario urban": (Scenario, load_yaml(CONFIG / "scenarios/urban.yaml"), "build"),
             "map 2x2 grid": (MapSpec, generate(GridSpec(blocks_x=2, blocks_y=2)), "build")}
    for path in sorted((CONFIG / "sensors").glob("*.yaml")):
        cls = ImuParams if path.stem.startswith("imu") else GnssParams
        files[f"sensor {path.stem}"] = (cls, load_yaml(path), "build")
    for path in sorted((CONFIG / "platforms").glob("*.yaml")):
        files[f"platform {path.stem}"] = (PlatformParams, load_yaml(path), "build")
    for name, cls in NODE_PARAMS.items():
        flat = {n: d for n, _, d, _ in flat_fields(cls) if d is not dataclasses.MISSING}
        shipped = flatten(_node_section(name)) if (CONFIG / f"{name}.yaml").exists() else {}
        flat.update(shipped)
        files[f"node {name}"] = (cls, flat, "flat")
    return files


def _paths(data, prefix=()) -> list[tuple]:
    """Every key path into nested dicts/lists (leaves and containers alike)."""
    out = []
    items = (data.items() if isinstance(data, dict)
             else enumerate(data) if isinstance(data, list) else ())
    for key, value in items:
        out.append((*prefix, key))
        out.extend(_paths(value, (*prefix, key)))
    return out


def _copy(data):
    if isinstance(data, dict):
        return {k: _copy(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [_copy(v) for v in data]
    return data


@st.composite
def file_case(draw, family: str):
    """(name, class, mutated data, how) for one shipped file of ``family`` ("vehicle", "map",
    "scenario", "sensor", "platform", "node") with 1..3 mutations."""
    files = shipped_files()
    name = draw(st.sampled_from(sorted(n for n in files if n.startswith(f"{family} "))))
    cls, data, how = files[name]
    data = _copy(data)
    for _ in range(draw(st.integers(1, 3))):
        paths = _paths(data)
        op = draw(st.sampled_from(("replace", "replace", "replace", "delete", "add")))
        path = draw(st.sampled_from(paths)) if paths else ()
        parent = data
        for key in path[:-1]:
            parent = parent[key]
        if op == "add" or not path:
            target = parent if isinstance(parent, dict) else data
            # ROS parameter names are strings; a YAML key may be anything
            keys = ("unknown_key", "x", "", "a..b", "vehicle.x", "chassis")
            keys += () if how == "flat" else (7, None, 1.5)
            # (_copy: the shared constants stay unmutated)
            target[draw(st.sampled_from(keys))] = _copy(draw(hostile_value))
        elif op == "delete":
            del parent[path[-1]]
        else:
            parent[path[-1]] = _copy(draw(hostile_value))  # constants stay unmutated
    return name, cls, data, how


def _check_config_error(exc: ConfigError, source: str) -> None:
    text = str(exc)
    assert text.startswith(source), f"message does not name the source: {text!r}"
    assert "\n" not in text, f"not one line: {text!r}"
    assert exc.reason.strip(), text


def check_file(case) -> None:
    name, cls, data, how = case
    source = f"fuzz {name}"
    try:
        if how == "flat":
            build_flat(cls, data, source=source)
        else:
            build(cls, data, source=source)
    except ConfigError as exc:
        _check_config_error(exc, source)


raw_file_case = st.tuples(
    st.sampled_from(("vehicle medium_car", "scenario urban", "map 2x2 grid",
                     "platform stewart6_generic", "sensor imu_adis16448", "sensor gnss_rtk")),
    st.one_of(st.binary(max_size=200), st.text(max_size=200).map(str.encode),
              st.sampled_from((b"a: [", b"{", b"- 1\n- 2", b"a: !!python/object:os.system x",
                               b"\xff\xfe", b"a: 1e999", b"a: " + b"9" * 5000, b"[" * 2000,
                               b"&a [*a]", b"a: &x 1\nb: *x", b"\x00",
                               b"chassis: {mass_kg: .nan}"))))


def check_raw_file(case) -> None:
    name, content = case
    cls = shipped_files()[name][0]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "fuzz.yaml"
        path.write_bytes(content)
        try:
            load(cls, path)
        except ConfigError as exc:
            _check_config_error(exc, str(path))


# name -> (strategy, property); the test module and the bench run these
TARGETS = {
    "rig input packet": (rig_packet_case(), check_rig_packet),
    "platform frame": (platform_frame_case(), check_platform_frame),
    "sequence tracker": (sequence_case, check_sequence_tracker),
    "rig link loss": (link_case(), check_link),
    "VehicleControl": (control_case, check_vehicle_control),
    "stack setpoint": (setpoint_case, check_setpoint),
    "imu fault sequences": (fault_sequence(IMU_NAMES), check_imu_faults),
    "gps fault sequences": (fault_sequence(GPS_NAMES), check_gps_faults),
    "vehicle fault sequences": (vehicle_fault_case, check_vehicle_faults),
    **{f"mutated {family} files": (file_case(family), check_file)
       for family in ("vehicle", "map", "scenario", "sensor", "platform", "node")},
    "raw file bytes": (raw_file_case, check_raw_file),
}
