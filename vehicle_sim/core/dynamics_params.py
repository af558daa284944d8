"""Parameters of the dynamics node (one source of truth for names, types, defaults, bounds)."""
from __future__ import annotations

import math
from dataclasses import dataclass

from vehicle_sim.core.accident.params import AGENT_TIMEOUT_MAX_S
from vehicle_sim.core.config import spec
from vehicle_sim.core.frames import ODOM_MAX_M, REFERENCE_POINTS, OdomInMap
from vehicle_sim.core.run_summary import MAX_RUN_DURATION_S

# the one place an odom that is not map would need a conversion it does not get: the ego's crash
# contacts, the traffic, GNSS, accident, ego driver and ground truth take the ego's odom pose
# as map coordinates
ODOM_IN_MAP_RULE = ("odom_in_map other than the identity needs map_file '' and a dynamics node "
                    "without the traffic, sensors and accidents of a scenario: they take the "
                    "ego's odom pose as map coordinates")

MODES = ("realtime", "fast", "lockstep")
MAX_PHYSICS_RATE_HZ = 20000.0  # [Hz] the fixed step rate's bound, and so the state rate's
# physics steps between two messages (decimations, a lockstep frame): 0.5 s at the highest
# physics rate (a choice: /clock, states and frames rarer than that starve the sim-time nodes)
MAX_STEPS_PER_MESSAGE = 10_000


@dataclass(frozen=True)
class InitialPose:
    x_m: float = spec(0.0, unit="m", ge=-ODOM_MAX_M, le=ODOM_MAX_M)
    """start position in odom"""
    y_m: float = spec(0.0, unit="m", ge=-ODOM_MAX_M, le=ODOM_MAX_M)
    """start position in odom"""
    yaw_rad: float = spec(0.0, unit="rad", ge=-2 * math.pi, le=2 * math.pi)
    """start heading, 0 = east (ENU)"""
    speed_mps: float = spec(0.0, unit="m/s", ge=-20.0, le=80.0)
    """start forward speed"""


@dataclass(frozen=True)
class DynamicsParams:
    vehicle_file: str = spec("vehicles/medium_car.yaml")
    """vehicle parameter file, absolute or relative to the config dir"""
    model: str = spec("single_track", choices=("single_track", "kinematic", "full14"))
    """vehicle model (vehicle_sim.core.vehicle.factory.MODELS)"""
    terrain_file: str = spec("")
    """friction zones and heightmap (model full14), relative to the config dir; '' = flat dry
    road"""
    integrator: str = spec("rk4", choices=("euler", "midpoint", "rk4"))
    """paper 001"""
    physics_rate_hz: float = spec(1000.0, unit="Hz", ge=50.0, le=MAX_PHYSICS_RATE_HZ)
    """fixed step rate"""
    state_rate_hz: float = spec(100.0, unit="Hz", gt=0.0, le=MAX_PHYSICS_RATE_HZ)
    """VehicleState and Odometry rate"""
    raw_state_decimation: int = spec(1, ge=0, le=MAX_STEPS_PER_MESSAGE)
    """raw state every N physics steps, 0 = off"""
    clock_decimation: int = spec(1, ge=1, le=MAX_STEPS_PER_MESSAGE)
    """/clock every N physics steps"""
    status_rate_hz: float = spec(1.0, unit="Hz", gt=0.0, le=50.0)
    """SimStatus rate (wall)"""
    mode: str = spec("realtime", choices=MODES)
    """realtime pacing, fast, or lockstep"""
    real_time_factor: float = spec(1.0, gt=0.0, le=1000.0)
    """sim seconds per wall second"""
    duration: float = spec(0.0, unit="s", ge=0.0, le=MAX_RUN_DURATION_S)
    """the run's end: physics and /clock hold at this sim time, 0 = none"""
    realtime_priority: int = spec(0, ge=0, le=99)
    """SCHED_FIFO priority of the physics loop in realtime mode (the thread that takes the node's
    requests one level below), 0 = normal scheduling"""
    physics_process: bool = spec(True)
    """realtime mode: the physics loop runs in a process of its own, where no ROS callback can hold
    it up (issue 14; core.loop_process); fast and lockstep runs keep it in a thread"""
    lockstep_peers: tuple[str, ...] = spec(())
    """node names that ack each lockstep frame"""
    lockstep_frame_steps: int = spec(10, ge=1, le=MAX_STEPS_PER_MESSAGE)
    """physics steps per lockstep frame (003's N)"""
    command_timeout_s: float = spec(0.5, unit="s", gt=0.0, le=3600.0)
    """sim time without a command before the watchdog brakes (stacks command at >= 10 Hz; up to an
    hour for an open-loop run that sends one command)"""
    watchdog_brake: float = spec(1.0, ge=0.0, le=1.0)
    """brake pedal applied by the watchdog"""
    wait_for_nodes: tuple[str, ...] = spec(())
    """start stepping only when these nodes are up, read /clock and are matched as readers of this
    node's topics (the runner and launch file fill in the scenario's)"""
    clockless_nodes: tuple[str, ...] = spec(())
    """those of wait_for_nodes that read no /clock (the bridge): not waited for as readers"""
    start_timeout_s: float = spec(120.0, unit="s", gt=0.0, le=3600.0)
    """wall time to wait for them, then start anyway with a warning (a cold numba cache, e.g. a
    workspace build without the set-up's warm-up, took ~45-60 s to compile on a loaded 2-core
    machine)"""
    start_settle_s: float = spec(1.0, unit="s", ge=0.0, le=60.0)
    """wall time after they are up, for DDS discovery to match their subscriptions (a choice:
    discovery takes ~1 s)"""
    map_file: str = spec("maps/urban_grid.yaml")
    """map whose static objects the ego can crash into (issue 11; trees, poles, barriers,
    buildings), relative to the config dir; '' = no crash contacts (neither statics nor traffic
    agents)"""
    agent_timeout_s: float = spec(0.5, unit="s", gt=0.0, le=AGENT_TIMEOUT_MAX_S)
    """a traffic shard silent this long (sim time): its agents are no longer obstacles for the ego's
    crash contacts"""
    odom_frame: str = spec("odom")
    """REP-105 odometry frame"""
    base_frame: str = spec("base_link")
    """REP-105 body frame (at the reference point)"""
    base_link: str = spec("cg", choices=REFERENCE_POINTS)
    """reference point of base_link in odometry, /tf and the sensor frames: cg, or rear_axle (centre
    on the ground, Autoware's); vehicle/state stays the CG's (core.frames)"""
    map_frame: str = spec("map")
    """REP-105 map frame of the static map -> odom"""
    publish_tf: bool = spec(True)
    """odom -> base_link on /tf, map -> odom on /tf_static"""
    odom_in_map: OdomInMap = OdomInMap()
    initial: InitialPose = InitialPose()

    def __post_init__(self) -> None:
        if self.state_rate_hz > self.physics_rate_hz:
            raise ValueError(f"state_rate_hz {self.state_rate_hz} exceeds physics_rate_hz "
                             f"{self.physics_rate_hz}")
        if self.map_file and self.odom_in_map != OdomInMap():
            raise ValueError(ODOM_IN_MAP_RULE)
        if self.terrain_file and self.model != "full14":
            raise ValueError(f"terrain_file needs model full14 (model is {self.model})")
        if self.mode == "lockstep" and not self.lockstep_peers:
            raise ValueError("mode lockstep needs lockstep_peers (use mode fast without peers)")
        if self.mode == "lockstep" and self.lockstep_frame_steps % self.clock_decimation:
            raise ValueError(f"lockstep_frame_steps {self.lockstep_frame_steps} must be a "
                             f"multiple of clock_decimation {self.clock_decimation}: peers "
                             f"acknowledge /clock ticks")
        if self.mode == "lockstep" and self.lockstep_frame_steps % self.every(self.state_rate_hz):
            raise ValueError(f"lockstep_frame_steps {self.lockstep_frame_steps} must be a "
                             f"multiple of the {self.every(self.state_rate_hz)} steps between "
                             "two vehicle/state messages: peers wait for the state of each frame")
        if self.mode == "lockstep" and not self.raw_state_decimation:
            raise ValueError("mode lockstep needs the raw state (raw_state_decimation > 0): "
                             "sensor peers wait for the raw state of each frame")
        if self.mode == "lockstep" and self.lockstep_frame_steps % self.raw_state_decimation:
            raise ValueError(f"lockstep_frame_steps {self.lockstep_frame_steps} must be a "
                             f"multiple of raw_state_decimation {self.raw_state_decimation}: "
                             "sensor peers wait for the raw state of each frame")

    @property
    def dt_ns(self) -> int:
        return round(1e9 / self.physics_rate_hz)

    @property
    def end_step(self) -> int:
        """The step the run holds at (``duration``; 0: none): the first whole state period at
        or after it, so the state of the run's end is published (a monitor waits for it)."""
        if self.duration <= 0.0:
            return 0
        k = -(-round(self.duration * 1e9) // self.dt_ns)  # ceil: a positive duration ends
        m = self.every(self.state_rate_hz)
        return -(-k // m) * m

    def every(self, rate_hz: float) -> int:
        """Physics steps between two publications at ``rate_hz`` (at least 1)."""
        return max(1, round(self.physics_rate_hz / rate_hz))
