"""Autopilot of the ego: paper 004's driver model (sec. 6) turned into pedal and steering commands.

Reference point: the ego CG (base_link); pose in the map frame (ENU) [m, rad], forward speed u
[m/s]. The traffic map frame and odom coincide (static identity map -> odom, as the traffic node).

- Route: :class:`~vehicle_sim.core.ego.route.Route` from the street lane best matching the first
  pose (the ego may start off the lane: pure pursuit towards the lane's extension drives onto it);
  chosen again when the ego jumps (> ``JUMP_M`` from its route) or simulation time goes back.
- The laws are the traffic agents' own (core.traffic.kernels.driver_law, one copy); the ego
  brings its route and its leader search.
- Steering (004 eqs. 6-8): look-ahead d_s = t_s u + d_0 along the route, capped in tight curves;
  delta_P = atan(h / R), R the arc through the CG tangent to u through the look-ahead point
  (1/R = 2 y_b / (x_b^2 + y_b^2) in the body frame); delta = delta_P + c_d d(delta_P)/dt; clamped
  to the vehicle limit.
- Speed (004 eq. 9, most restrictive reference): the current lane's speed limit minus
  ``cruise_margin_mps`` at the look-ahead distance d_s; a lower limit of a later lane at its
  start, the curve speed sqrt(a_lat / k_max) of each lane ahead, the give-way speed, and stops
  (red light, yellow light one can stop for at ``yellow_stop_decel_mps2`` (the agents'
  decision, driver_law.stops_at_yellow, taken anew each step), stop sign, end of route: front
  bumper ``stop_margin_m`` before the line, the traffic core's ``stop_accel`` creep law) each
  enter once their distance is within the comfortable braking distance
  (u^2 - u_r^2) / (2 b) + d_s (before that eq. 9 would only cap the acceleration); the nearest
  traffic agent in the route corridor (driver_law.corridor_gap, margin ``corridor_margin_m``)
  gives the IDM acceleration (driver_law.idm) with its speed along the route. Zebra and
  signalised crossings are ignored (no pedestrians are simulated).
- Pedals (004 eqs. 10-13, driver_law.pedal_accel as the agents'): a = min(a_r, a_m) plus the
  derivative term (c_d/c_p) c_p mu g da_r/dt, clipped to [0, mu g], when accelerating,
  max(a_r, -mu g) when braking; the force m a + rolling resistance + drag is mapped to the
  throttle through the vehicle's drive force min(F_max, P/u) (the constant-power gearbox of 004)
  or to the brake through the total brake force: pedal = force / force at full pedal (the
  vehicle's inverse model, core.motion.stack_controller.LongitudinalModel, as the stack
  controller's). Below ``HOLD_BELOW_MPS`` with a braking (or zero) demand the brake is held at
  least at ``hold_brake``.
- Stop signs: the stop is done (the sign is dropped, the ego goes on) at the first control step
  with the front bumper within core.ego.full_stop.STOP_DONE_M of its stop point and the speed
  below ``stop_sign_speed_mps`` (default core.ego.full_stop.FULL_STOP_MPS, the run report's
  "stopped" threshold: that state is one the report sees, so it counts the stop). Until then
  the creep law brings the bumper within 0.3 m of the stop point and brakes to a standstill
  there, held by ``hold_brake``, so the stop always ends.
Unknown light states (no traffic/lights received) count as green.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from vehicle_sim.core.ego.full_stop import STOP_DONE_M
from vehicle_sim.core.ego.params import EgoDriverParams
from vehicle_sim.core.ego.route import Route, nearest_lane
from vehicle_sim.core.motion import stack_controller
from vehicle_sim.core.motion.stack_controller import LongitudinalModel
from vehicle_sim.core.traffic.kernels import driver_law as law
from vehicle_sim.core.traffic.kernels.route_scan import corridor_leader, route_points
from vehicle_sim.core.traffic.light_states import RED, YELLOW
from vehicle_sim.core.traffic.network import Network
from vehicle_sim.core.vehicle.params import VehicleParams

POLYLINE_STEP_M = 2.0  # route sampling for the leader search (lanes are 3.5 m wide)
PASSED_LINE_M = 0.5  # a line this far behind the front bumper has been passed
HOLD_BELOW_MPS = 0.5  # below this speed a braking demand holds the brake (not a full stop)
JUMP_M = 10.0  # ego this far from its route point: it was moved, pick the nearest lane again


@dataclass(frozen=True)
class Command:
    """One control output: pedals [0..1], road-wheel angle [rad] (+ left), gear, and what the
    autopilot based it on (for logs): the governing reference, the acceleration demand
    [m/s^2], the lane name, arc length s [m] and lateral offset [m] (+ left) on it."""

    steer_rad: float
    throttle: float
    brake: float
    gear: int
    accel_mps2: float
    reference: str
    lane: str
    s_m: float
    lateral_m: float


# what the driver sends when the autopilot cannot drive (a ValueError from ``update``): full
# brake in first gear, wheels straight (the ego driver node's command, and the engine's)
BRAKING = Command(steer_rad=0.0, throttle=0.0, brake=1.0, gear=1, accel_mps2=0.0,
                  reference="braking", lane="", s_m=0.0, lateral_m=0.0)


def warm_up(network: Network) -> None:
    """Compile (or load from numba's cache) every kernel the autopilot calls, without changing
    any state: call it before the control loop so the first commands are not late."""
    network.point(0, 0.0)
    network.locate(0, 0.0, 0.0, 0.0)
    law.ref_accel(1.0, 0.0, 1.0)
    law.stop_accel(0.0, 1.0, 0.02, 1.0)
    law.idm(1.0, 1.0, 10.0, 0.0, 1.0, 1.0, 1.0, 1.0)
    law.lookahead(1.0, 0.0)
    law.pursuit_angle(0.0, 0.0, 0.0, 1.0, 0.0, 1.0)
    law.steer_angle(0.0, 0.0, 0.02, 0.0, 1.0)
    law.curve_speed(1.0, 0.1)
    law.pedal_accel(0.0, 0.0, 0.02, 1.0, 0.0, 1.0)
    law.stops_at_yellow(1.0, 1.0, 1.0)
    law.corridor_gap(1.0, 0.0, 1.0, (1.0, 1.0), (1.0, 1.0), 0.0)
    stack_controller.warm_up()  # the inverse model's drive law (LongitudinalModel)
    net = network.net
    line = route_points(net.pts, net.lane_f, net.lane_i, np.zeros(1, dtype=np.int64), 0.0,
                        np.arange(0.0, 4.0, 2.0))
    corridor_leader(np.zeros((1, 6)), line, 0.0, 0.0, 1.0, (1.0, 1.0), 0.0)


class Autopilot:
    """Drives the ego along a seeded random route of ``network`` (see the module docstring)."""

    def __init__(self, network: Network, vehicle: VehicleParams, params: EgoDriverParams):
        self.network, self.v, self.p = network, vehicle, params
        self.model = LongitudinalModel.from_vehicle(vehicle)
        self.rng = np.random.default_rng(params.seed)
        self.route: Route | None = None
        self.lights: dict[str, int] = {}
        self.agents = np.zeros((0, 6))
        self._t_prev: float | None = None
        self._delta_p_prev = 0.0
        self._a_prev = 0.0
        self._cleared_stops: set[tuple[int, float]] = set()
        self._lanes: dict[int, tuple[float, float, float, float]] = {}  # _lane_speeds
        c = vehicle.chassis
        self.length_m, self.width_m, self.wheelbase_m = c.length_m, c.width_m, c.wheelbase_m
        self.half_length_m = 0.5 * c.length_m
        self._own_size = (float(c.length_m), float(c.width_m))

    # ---------------------------------------------------------------- inputs
    def set_lights(self, states: Mapping[str, int]) -> None:
        """Light states by name ("signal:lane", as TrafficSim.light_states / TrafficLight.id):
        GREEN 0, YELLOW 1, RED 2, DARK -1. Replaces the previous set."""
        self.lights = dict(states)

    def set_agents(self, agents: np.ndarray) -> None:
        """(n, 6) rows x [m], y [m], yaw [rad], speed [m/s], length [m], width [m] (map frame)."""
        a = np.asarray(agents, dtype=float).reshape(-1, 6)
        finite = np.isfinite(a)
        self.agents = a.copy(order="C") if finite.all() else a[finite.all(axis=1)]

    # ---------------------------------------------------------------- control
    def update(self, t_s: float, x: float, y: float, yaw: float, speed: float) -> Command:
        """The command for the ego pose at simulation time t_s [s] (see the module docstring).

        Raises ValueError for a non-finite input or when no lane is within
        ``max_start_distance_m`` of the first pose.
        """
        if not all(math.isfinite(v) for v in (t_s, x, y, yaw, speed)):
            raise ValueError(f"non-finite ego input t={t_s} x={x} y={y} yaw={yaw} u={speed}")
        if self._t_prev is not None and t_s < self._t_prev:
            self._restart()  # simulation time went back: a new run (e.g. sim/reset)
        if self.route is None:
            self._start(x, y, yaw)
        route = self.route
        route.localize(x, y)
        px, py, _, _ = route.point_ahead(0.0)
        if math.hypot(px - x, py - y) > JUMP_M:  # teleported (reset, scenario jump): new route
            self._restart()
            self._start(x, y, yaw)
            route = self.route
            route.localize(x, y)
        dt = t_s - self._t_prev if self._t_prev is not None else 0.0
        self._t_prev = t_s
        u = max(speed, 0.0)
        ds = self.p.lookahead_time_s * u + self.p.lookahead_min_m
        steer = self._steer(x, y, yaw, ds, dt)
        a_r, name = self._reference(u, ds)
        accel = self._accel(a_r, dt)
        throttle, brake = self._pedals(accel, u)
        return Command(steer, throttle, brake, 1, accel, name,
                       self.network.lane_names[route.lane], route.s_m, route.lateral_m)

    def _restart(self) -> None:
        self.route, self._t_prev, self._delta_p_prev, self._a_prev = None, None, 0.0, 0.0
        self._cleared_stops.clear()

    def _start(self, x: float, y: float, yaw: float) -> None:
        lane, dist = nearest_lane(self.network, x, y, yaw)
        if dist > self.p.max_start_distance_m:
            raise ValueError(f"no lane within {self.p.max_start_distance_m} m of the ego at "
                             f"({x:.1f}, {y:.1f}); nearest {self.network.lane_names[lane]} at "
                             f"{dist:.1f} m")
        self.route = Route(self.network, lane, self.rng, self.p.horizon_m)
        # a coarse arc length to start the local projection search from
        best = (math.inf, 0.0)
        for s in np.arange(0.0, self.route.length(lane) + 1e-9, 1.0):
            px, py, _, _ = self.route.point_ahead(float(s))
            best = min(best, (math.hypot(px - x, py - y), float(s)))
        self.route.s_m = best[1]

    def _steer(self, x: float, y: float, yaw: float, ds: float, dt: float) -> float:
        """004 eqs. 6-8 (driver_law): pure pursuit from the CG plus the derivative term; the
        look-ahead is capped in tight curves as for the traffic agents."""
        px, py, _, k = self.route.point_ahead(ds)
        ds, capped = law.lookahead(ds, k)
        if capped:  # a tight curve ahead: a nearer point
            px, py, _, _ = self.route.point_ahead(ds)
        delta_p = law.pursuit_angle(x, y, yaw, px, py, self.wheelbase_m)
        delta = law.steer_angle(delta_p, self._delta_p_prev, dt, self.p.steer_d_gain_s,
                                self.v.steering.max_road_wheel_angle_rad)
        self._delta_p_prev = delta_p
        return delta

    def _reference(self, u: float, ds: float) -> tuple[float, str]:
        """Most restrictive reference acceleration a_r [m/s^2] (004 eq. 9) and its name."""
        p, route = self.p, self.route
        refs: list[tuple[float, str]] = []
        for idx, lane, start in route.lanes_ahead(p.horizon_m):
            u_lim, u_c, s_k_max, length = self._lane_speeds(lane)
            if idx == route.first:  # the current lane: its limit at the look-ahead distance
                refs.append((law.ref_accel(u_lim, u, ds), "speed_limit"))
            else:
                refs.append((self._slow(u_lim, u, start, ds), "speed_limit"))
            if u_c < math.inf and start + length > 0.0:
                refs.append((self._slow(u_c, u, start + s_k_max, ds), "curve"))
            refs.extend(self._signals(idx, lane, start, u, ds))
        if route.dead_end:
            end = sum(route.length(ln) for ln in route.lanes) - route.s_m
            refs.append((self._stop(u, end, ds), "end_of_route"))
        refs.append(self._leader(u))
        return min(refs, key=lambda r: r[0])

    def _lane_speeds(self, lane: int) -> tuple[float, float, float, float]:
        """(speed limit - cruise margin (>= 0) [m/s], curve speed [m/s] (inf on near-straight
        lanes), arc length of the sharpest point [m], length [m]) of a lane: fixed, computed
        at its first use."""
        out = self._lanes.get(lane)
        if out is None:
            network, p = self.network, self.p
            k_max, s_k_max = network.sharpest_curve(lane)
            out = self._lanes[lane] = (
                max(network.speed_limit(lane) - p.cruise_margin_mps, 0.0),
                law.curve_speed(p.lateral_accel_mps2, k_max), s_k_max, network.lane_length(lane))
        return out

    def _slow(self, u_r: float, u: float, d: float, ds: float) -> float:
        """004 eq. 9 for a lower speed u_r at d metres: applied once d is within the comfortable
        braking distance (u^2 - u_r^2) / (2 b) plus the look-ahead d_s (inf before)."""
        if u <= u_r or d > (u * u - u_r * u_r) / (2.0 * self.p.comfort_decel_mps2) + ds:
            return math.inf
        return law.ref_accel(u_r, u, max(d, 0.0))

    def _stop(self, u: float, line_ahead_m: float, ds: float) -> float:
        """Stop the front bumper ``stop_margin_m`` before a line ``line_ahead_m`` from the CG:
        the traffic core's creep law (driver_law.stop_accel), within braking distance + d_s."""
        b = self.p.comfort_decel_mps2
        d = line_ahead_m - self.half_length_m - self.p.stop_margin_m
        if d > u * u / (2.0 * b) + ds:
            return math.inf
        return law.stop_accel(u, d, 1.0 / self.p.control_rate_hz, b)

    def _signals(self, idx: int, lane: int, start: float, u: float, ds: float
                 ) -> list[tuple[float, str]]:
        """References of the lights, stop and give-way signs on one lane of the route."""
        p, out = self.p, []
        for s_sig, kind, light in self.network.signals(lane):
            ahead = start + s_sig  # CG to the line [m]
            if ahead - self.half_length_m < -PASSED_LINE_M:
                continue
            d = ahead - self.half_length_m - p.stop_margin_m  # to the stop point
            if kind == "traffic_light":
                state = self.lights.get(light)
                if state == RED or (state == YELLOW and
                                    law.stops_at_yellow(u, d, p.yellow_stop_decel_mps2)):
                    out.append((self._stop(u, ahead, ds),
                                "red_light" if state == RED else "yellow_light"))
            elif kind == "stop" and (idx, s_sig) not in self._cleared_stops:
                if u < p.stop_sign_speed_mps and d < STOP_DONE_M:
                    self._cleared_stops.add((idx, s_sig))
                else:
                    out.append((self._stop(u, ahead, ds), "stop_sign"))
            elif kind == "give_way" and d > 0.0:
                out.append((self._slow(p.give_way_speed_mps, u, d, ds), "give_way"))
        return out

    def _leader(self, u: float) -> tuple[float, str]:
        """IDM reaction to the nearest agent in the route corridor ahead (driver_law, through
        kernels.route_scan.corridor_leader)."""
        p, a = self.p, self.agents
        if len(a) == 0:
            return math.inf, "leader"
        route = self.route
        x0, y0, _, _ = route.point_ahead(0.0)
        line = route.polyline(p.horizon_m, POLYLINE_STEP_M)
        k, gap, cos_rel = corridor_leader(a, line, x0, y0, p.horizon_m, self._own_size,
                                          p.corridor_margin_m)
        if k < 0:
            return math.inf, "leader"
        u0 = max(self.network.speed_limit(route.lane) - p.cruise_margin_mps, 0.1)
        u_lead = max(0.0, float(a[k, 3]) * cos_rel)
        return law.idm(u, u0, gap, u - u_lead, p.accel_max_mps2, p.comfort_decel_mps2,
                       p.time_headway_s, p.min_gap_m), "leader"

    def _accel(self, a_r: float, dt: float) -> float:
        """004 eqs. 10-13 as an acceleration, the agents' law (driver_law.pedal_accel): at most
        a_m (plus the derivative term) accelerating, within [-mu g, mu g]. a_r is finite: the
        current lane's speed limit is always a reference."""
        p = self.p
        accel = law.pedal_accel(a_r, self._a_prev, dt, p.accel_max_mps2, p.accel_d_gain_s,
                                self.v.tyre.friction_coefficient)
        self._a_prev = a_r
        return accel

    def _pedals(self, accel: float, u: float) -> tuple[float, float]:
        """(throttle, brake) in [0, 1] giving ``accel`` [m/s^2] at speed u >= 0 [m/s], through
        the vehicle's longitudinal inverse model (stack_controller.LongitudinalModel)."""
        model = self.model
        force = model.force_n(accel, u)
        if accel <= 0.0 and u < HOLD_BELOW_MPS:  # asked to stop or stay: hold the car
            return 0.0, max(self.p.hold_brake,
                            min(-model.mass_kg * accel / model.max_brake_force_n, 1.0))
        if force >= 0.0:
            return min(force / model.drive_available_n(u), 1.0), 0.0
        return 0.0, min(-force / model.max_brake_force_n, 1.0)
