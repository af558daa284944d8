"""Parameters of the hardware bridge node (issue 6): I/O endpoints, rates and the preset to load.

The platform itself (geometry, washout, limits, wire details, input calibration, force feedback,
mux) lives in the preset ``config/platforms/*.yaml`` (``PlatformParams``). The node's rates
override the preset's ``washout.rate_hz`` and ``ffb.max_update_hz`` (see ``apply_to``), so the
loop period and the filter discretisation can never disagree.

Addresses are IPv4 literals (no name resolution at run time). Platform frames go only to
``output_host:output_port``; input packets are accepted only from ``allowed_peers``; the node
never replies to a sender. With ``input_key_file`` every input packet must carry an HMAC tag
made with the key in that file (``input_key``, ``wire``); the file is checked here, so a bad
one refuses the start.
"""
from __future__ import annotations

import ipaddress
from dataclasses import dataclass, replace

from vehicle_sim.core.config import spec
from vehicle_sim.core.dynamics_params import MODES
from vehicle_sim.core.frames import REFERENCE_POINTS
from vehicle_sim.core.motion.arbiter import ArbiterParams, StackInput
from vehicle_sim.core.motion.input_key import read_key_file
from vehicle_sim.core.motion.params import WATCHDOG_MAX_S, PlatformParams, ffb_rate_spec

EVDEV_AXES = ("steering", "throttle", "brake", "clutch")
# termios speeds available on Linux (the serial link configures the port with termios)
SERIAL_BAUD_RATES = (9600, 19200, 38400, 57600, 115200, 230400, 460800, 500000, 576000, 921600,
                     1000000, 1500000, 2000000)
SERIAL_BITS_PER_BYTE = 10  # 8N1: start bit, 8 data bits, stop bit
SERIAL_MAX_LOAD = 0.9  # design choice: frames may fill at most 90 % of the line's capacity
# the platform loop (a Python thread sleeping to absolute deadlines) runs at most this fast; the
# publication rates are divisions of it
PLATFORM_RATE_MAX_HZ = 2000.0


def _unicast(address: ipaddress.IPv4Address) -> bool:
    return not (address.is_multicast or address.is_unspecified
                or address == ipaddress.IPv4Address("255.255.255.255"))


def _ipv4(name: str, value: str) -> ipaddress.IPv4Address:
    try:
        return ipaddress.IPv4Address(value)
    except ValueError:
        raise ValueError(f"{name} {value!r} is not an IPv4 address (e.g. 127.0.0.1)") from None


@dataclass(frozen=True)
class BridgeNodeParams:
    """ROS parameters of ``bridge_node`` (one source of defaults; config/bridge.yaml overrides)."""

    platform_file: str = spec("platforms/stewart6_generic.yaml")
    """platform preset, absolute or relative to the config dir"""
    vehicle_file: str = spec("vehicles/medium_car.yaml")
    """the ego's vehicle file (the dynamics node's): the stack controller's model and steering
    limit"""
    platform_rate_hz: float = spec(500.0, unit="Hz", ge=50.0, le=PLATFORM_RATE_MAX_HZ)
    """platform loop on absolute deadlines (issue 6: 500 Hz); replaces the preset's
    washout.rate_hz"""
    ffb_rate_hz: float = ffb_rate_spec("highest FF_CONSTANT update rate, ~200-500 Hz "
                                       "(conventions.md); replaces the preset's ffb.max_update_hz")
    control_rate_hz: float = spec(100.0, unit="Hz", gt=0.0, le=PLATFORM_RATE_MAX_HZ)
    """vehicle/control publication rate (mux result)"""
    cue_rate_hz: float = spec(100.0, unit="Hz", gt=0.0, le=PLATFORM_RATE_MAX_HZ)
    """motion/cue publication rate"""
    wire_format: str = spec("", choices=("", "simtools_text", "binary"))
    """platform frame format, '' = the preset's wire.format"""
    output_host: str = spec("127.0.0.1")
    """IPv4 address of the rig controller"""
    output_port: int = spec(0, ge=0, le=65535)
    """UDP port of the rig controller, 0 = no platform output"""
    serial_device: str = spec("")
    """serial port of a rig controller (e.g. /dev/ttyUSB0): platform frames raw 8N1, '' = no serial
    output"""
    serial_baud: int = spec(115200, unit="bit/s", choices=SERIAL_BAUD_RATES)
    """serial line speed; must carry serial_rate_hz frames"""
    serial_rate_hz: float = spec(100.0, unit="Hz", gt=0.0, le=PLATFORM_RATE_MAX_HZ)
    """platform frames per second on the serial port"""
    input_host: str = spec("127.0.0.1")
    """IPv4 address the rig input socket binds to"""
    input_port: int = spec(0, ge=0, le=65535)
    """UDP port for rig input packets, 0 = off"""
    allowed_peers: tuple[str, ...] = spec(("127.0.0.1",))
    """IPv4 senders whose input packets are accepted; others are dropped and counted"""
    input_key_file: str = spec("")
    """absolute path of the rig input's shared key (at least 16 bytes, mode 600, owned by this
    user): every input packet must then carry its HMAC-SHA256 tag; '' = no authentication"""
    evdev_device: str = spec("")
    """wheel as /dev/input/eventN, 'auto' = first device with FF_CONSTANT and axes, '' = no evdev
    input"""
    evdev_axes: tuple[str, ...] = spec(("ABS_X", "ABS_Z", "ABS_RZ", "ABS_Y"))
    """evdev axis codes of steering, throttle, brake, clutch (check yours with evtest)"""
    autonomy_timeout_s: float = spec(0.5, unit="s", gt=0.0, le=WATCHDOG_MAX_S)
    """autonomy/control older than this is not fresh (as the dynamics node's command_timeout_s
    default)"""
    driver_fallback: bool = spec(True)
    """drive from the rig while no fresh autonomy command arrives, even before a takeover"""
    max_gear: int = spec(1, ge=1, le=30)
    """highest forward gear the driver's paddles select (the dynamics node's automatic box has 1)"""
    base_link: str = spec("cg", choices=REFERENCE_POINTS)
    """reference point of base_link, as the dynamics node's base_link: the velocity report is that
    point's (core.frames)"""
    base_frame: str = spec("base_link")
    """the vehicle's body frame, as the dynamics node's base_frame: a stamped stack command must be
    in it (or in '')"""
    mode: str = spec("realtime", choices=MODES)
    """the run's pacing (set by the scenario): in fast and lockstep modes autonomy commands are
    forwarded as they arrive, not by the wall-clock loop, so the dynamics node gets each one in its
    frame"""
    lockstep: bool = spec(False)
    """hold each /clock tick until a stack command arrived at most stack_lag_s before it, then
    acknowledge it (core.motion.stack_sync; dynamics mode lockstep, set by the scenario's
    lockstep_peer)"""
    stack_lag_s: float = spec(0.1, unit="s", ge=0.01, le=10.0)
    """lockstep: sim time may run this far ahead of the newest stack command (two periods of a 20 Hz
    stack); below autonomy_timeout_s"""
    stack_wait_s: float = spec(30.0, unit="s", gt=0.0, le=3600.0)
    """lockstep: wall time the run waits for a silent stack, then goes on without it (it brakes)
    until the stack commands again"""
    stats_period_s: float = spec(10.0, unit="s", ge=0.0, le=3600.0)
    """log loop lateness and packet counts this often, 0 = at exit"""

    def __post_init__(self) -> None:
        out = _ipv4("output_host", self.output_host)
        if not _unicast(out):
            raise ValueError(f"output_host {self.output_host} must be one unicast address")
        if _ipv4("input_host", self.input_host).is_multicast:
            raise ValueError(f"input_host {self.input_host} is multicast: bind a local address")
        for peer in self.allowed_peers:  # a datagram's sender is always one unicast address
            if not _unicast(_ipv4("allowed_peers entry", peer)):
                raise ValueError(f"allowed_peers entry {peer} can never send: give the rig's "
                                 "unicast address")
        if self.input_port and self.input_port == self.output_port and (
                self.input_host == self.output_host
                or self.input_host == "0.0.0.0" and out.is_loopback):
            raise ValueError(f"input_port {self.input_port} is output_port on the same host: "
                             "the bridge would send its platform frames to itself")
        if self.input_port and self.evdev_device:
            raise ValueError("input_port and evdev_device: one rig input at a time (both would "
                             "feed one rig state: jumping axes, spurious button edges)")
        if self.input_port and not self.allowed_peers:
            raise ValueError("allowed_peers is empty: every input packet would be dropped")
        self.input_key()  # a missing, short or readable-by-others key file refuses the start
        for name in ("control_rate_hz", "cue_rate_hz", "serial_rate_hz"):
            if getattr(self, name) > self.platform_rate_hz:
                raise ValueError(f"{name} must not exceed platform_rate_hz "
                                 f"{self.platform_rate_hz:g} Hz")
        if self.lockstep and self.stack_lag_s >= self.autonomy_timeout_s:
            raise ValueError(f"stack_lag_s {self.stack_lag_s:g} s must be below "
                             f"autonomy_timeout_s {self.autonomy_timeout_s:g} s: a command that "
                             f"old is no longer fresh, so the run would brake while it waits")
        if self.lockstep and (self.input_port or self.evdev_device):
            raise ValueError("lockstep paces the run by the stack's commands in sim time: no "
                             "rig input (input_port 0, evdev_device '')")
        if len(self.evdev_axes) != len(EVDEV_AXES) or not all(
                a.startswith("ABS_") for a in self.evdev_axes):
            raise ValueError(f"evdev_axes needs {len(EVDEV_AXES)} ABS_* codes "
                             f"({', '.join(EVDEV_AXES)})")

    def input_key(self) -> bytes | None:
        """The rig input's shared key from ``input_key_file`` (None: no authentication)."""
        return read_key_file(self.input_key_file) if self.input_key_file else None

    def arbiter_params(self, steering_ratio: float, sources: tuple[str, ...]) -> ArbiterParams:
        """The arbiter's settings; ``sources``: the stack sources in priority order (the
        bridge's command topics, nodes.stack_inputs)."""
        return ArbiterParams(
            stack_inputs=tuple(StackInput(name, self.autonomy_timeout_s) for name in sources),
            driver_fallback=self.driver_fallback, forward_on_receipt=self.mode != "realtime",
            publish_every=self.every(self.control_rate_hz), steering_ratio=steering_ratio,
            max_gear=self.max_gear)

    def every(self, rate_hz: float) -> int:
        """Platform cycles between two publications at ``rate_hz`` (at least 1)."""
        return max(1, round(self.platform_rate_hz / rate_hz))

    def check_serial_capacity(self, frame_bytes: int) -> None:
        """ValueError unless ``serial_baud`` carries the serial frames of this size at the rate
        they go out: every ``every(serial_rate_hz)``-th platform frame (350 Hz of a 500 Hz loop
        is every frame: 500 Hz)."""
        if not self.serial_device:
            return
        rate_hz = self.platform_rate_hz / self.every(self.serial_rate_hz)
        need = rate_hz * frame_bytes * SERIAL_BITS_PER_BYTE
        if need > SERIAL_MAX_LOAD * self.serial_baud:
            most = SERIAL_MAX_LOAD * self.serial_baud / (frame_bytes * SERIAL_BITS_PER_BYTE)
            raise ValueError(
                f"serial_baud {self.serial_baud} carries at most {most:.0f} frames/s of "
                f"{frame_bytes} bytes (8N1, {SERIAL_MAX_LOAD:.0%} load); serial_rate_hz "
                f"{self.serial_rate_hz:g} sends {rate_hz:g} frames/s (every "
                f"{self.every(self.serial_rate_hz)} of platform_rate_hz "
                f"{self.platform_rate_hz:g}), {need / SERIAL_MAX_LOAD:.0f} bit/s: raise the "
                "baud rate, lower the rate or use the binary wire format")

    def apply_to(self, platform: PlatformParams) -> PlatformParams:
        """The preset with this node's loop rate, FFB rate and wire format (re-validated)."""
        wire = platform.wire
        if self.wire_format:
            wire = replace(wire, format=self.wire_format)
        return replace(platform, wire=wire,
                       washout=replace(platform.washout, rate_hz=self.platform_rate_hz),
                       ffb=replace(platform.ffb, max_update_hz=self.ffb_rate_hz))
