"""GNSS receiver emulation: NavSatFix-equivalent fixes from the true vehicle state.

Antenna position (ENU) = p_cg + R_wb r_ant; velocity (ENU) = R_wb (v + omega x r_ant).
Position error per ENU axis = white + first-order Gauss-Markov (noise.GaussMarkov); near building
footprints (GnssZones, within urban.distance_m) both sigmas are multiplied by urban.sigma_scale
and horizontal multipath offsets N(0, jump_sigma) appear at rate jump_rate_hz (held until the next
jump; removed when leaving the urban area). Inside an outage polygon the fix is NO_FIX or absent
(``outage_mode``). Fixes are released ``latency_s`` after the state they measure.
Reported covariance (ENU, diagonal): scale^2 (white^2 + gm^2) (+ jump_sigma^2 horizontally when
urban), times the fault noise scale squared.
"""
from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from vehicle_sim.core import config
from vehicle_sim.core.frames import point_velocity
from vehicle_sim.core.sensors.faults import GnssFaults
from vehicle_sim.core.sensors.frames import KinematicState, read_state, rpy_to_matrix
from vehicle_sim.core.sensors.geodesy import LocalFrame
from vehicle_sim.core.sensors.noise import GaussMarkov
from vehicle_sim.core.sensors.params import GnssParams
from vehicle_sim.core.sensors.schedule import Schedule
from vehicle_sim.core.sensors.zones import GnssZones

# sensor_msgs/NavSatStatus values.
STATUS_NO_FIX = -1
STATUS_FIX = 0


@dataclass(frozen=True)
class GnssFix:
    """One receiver output. Header stamp = ``stamp_s``; publish when sim time >= ``release_s``.

    With status NO_FIX the position fields are NaN, ``covariance_known`` is False (publish
    COVARIANCE_TYPE_UNKNOWN) and there is no velocity.
    """

    stamp_s: float  # sim time of the measured state [s]
    release_s: float  # stamp_s + latency [s]
    status: int  # STATUS_FIX or STATUS_NO_FIX
    latitude_deg: float
    longitude_deg: float
    altitude_m: float  # above the WGS-84 ellipsoid
    position_enu_m: np.ndarray  # the same fix in the local ENU frame (3,)
    position_cov_enu_m2: np.ndarray  # (3, 3) diagonal, ENU
    covariance_known: bool
    velocity_enu_mps: np.ndarray | None  # antenna velocity, None when disabled or no fix
    velocity_cov_enu_m2ps2: np.ndarray | None
    urban: bool  # antenna was in the degraded (near-building) area


class GnssModel:
    """Seeded GNSS emulator; call :meth:`update` at every physics step with the true state."""

    def __init__(self, params: GnssParams, seed: int | np.random.Generator,
                 zones: GnssZones | None = None):
        self.params = params
        self.rng = np.random.default_rng(seed)
        self.faults = GnssFaults()
        self.zones = zones if zones is not None else GnssZones()
        self.frame = LocalFrame(params.origin)
        h, v = params.horizontal, params.vertical
        self._gm_h = GaussMarkov(h.gm_sigma_m, h.gm_tau_s, 2, self.rng)
        self._gm_v = GaussMarkov(v.gm_sigma_m, v.gm_tau_s, 1, self.rng)
        self._white = np.array([h.white_sigma_m, h.white_sigma_m, v.white_sigma_m])
        self._gm_sig = np.array([h.gm_sigma_m, h.gm_sigma_m, v.gm_sigma_m])
        self._vel_sig = np.array([params.velocity_sigma_mps, params.velocity_sigma_mps,
                                  params.velocity_vertical_sigma_mps])
        self._lever = np.asarray(params.antenna_lever_arm_m, dtype=float)
        self._multipath = np.zeros(3)
        self._schedule = Schedule(params.rate_hz)
        self._pending: deque[GnssFix] = deque()
        self._last: GnssFix | None = None

    @classmethod
    def from_file(cls, path: str | Path, seed: int | np.random.Generator,
                  zones: GnssZones | None = None) -> GnssModel:
        """Build from a preset YAML (``config/sensors/gnss_*.yaml``); ConfigError names the key."""
        return cls(config.load(GnssParams, path), seed, zones)

    def set_zones(self, zones: GnssZones) -> None:
        """Replace building footprints / outage zones (e.g. when the road map is loaded)."""
        self.zones = zones

    def antenna(self, state: KinematicState) -> tuple[np.ndarray, np.ndarray]:
        """True antenna (position [m], velocity [m/s]) in local ENU."""
        p, rpy, v, w, _, _ = read_state(state)
        r_wb = rpy_to_matrix(*rpy)
        return p + r_wb @ self._lever, r_wb @ point_velocity(v, w, self._lever)

    def update(self, t_s: float, state: KinematicState) -> list[GnssFix]:
        """Fixes whose release time is <= t_s [s] (usually zero or one), oldest first."""
        dt_s = self._schedule.due(t_s)
        if dt_s is not None:
            fix = self._measure(float(t_s), dt_s, state)
            if fix is not None:
                self._pending.append(fix)
        out = []
        while self._pending and self._pending[0].release_s <= t_s + 1e-9:
            out.append(self._pending.popleft())
        return out

    def _measure(self, t_s: float, dt_s: float, state: KinematicState) -> GnssFix | None:
        pos, vel = self.antenna(state)
        urban = self._is_urban(pos)
        err, var = self._position_error(dt_s, urban)
        outage = self.zones.in_outage(pos[0], pos[1])
        fl = self.faults
        if fl.dropout or (outage and self.params.outage_mode == "no_output"):
            return None
        release = t_s + self.params.latency_s
        if fl.freeze and self._last is not None:
            self._last = replace(self._last, stamp_s=t_s, release_s=release)
            return self._last
        if outage or fl.no_fix:  # (a later freeze repeats this, as it was released)
            self._last = self._no_fix(t_s, release, urban)
            return self._last
        reported = pos + err + fl.position_jump_enu_m
        lat, lon, alt = self.frame.to_geodetic(reported)
        v_meas, v_cov = self._velocity(vel)
        self._last = GnssFix(t_s, release, STATUS_FIX, lat, lon, alt, reported, np.diag(var),
                             True, v_meas, v_cov, urban)
        return self._last

    def _is_urban(self, pos: np.ndarray) -> bool:
        u = self.params.urban
        return bool(self.zones.buildings) and self.zones.near_building(pos[0], pos[1], u.distance_m)

    def _position_error(self, dt_s: float, urban: bool) -> tuple[np.ndarray, np.ndarray]:
        """(error [m] (3,), variance [m^2] (3,)) of this epoch; advances the error processes."""
        u = self.params.urban
        scale = u.sigma_scale if urban else 1.0
        gm = np.concatenate([self._gm_h.step(dt_s, self.rng), self._gm_v.step(dt_s, self.rng)])
        white = self._white * self.rng.standard_normal(3)
        k = self.faults.noise_scale
        err = k * scale * (white + gm)
        var = (k * scale) ** 2 * (self._white ** 2 + self._gm_sig ** 2)
        if urban and u.jump_rate_hz > 0.0:
            if self.rng.random() < -math.expm1(-u.jump_rate_hz * dt_s):
                self._multipath = np.array([*(u.jump_sigma_m * self.rng.standard_normal(2)), 0.0])
            var = var + np.array([1.0, 1.0, 0.0]) * u.jump_sigma_m ** 2
        else:
            self._multipath = np.zeros(3)
        return err + self._multipath, var

    def _velocity(self, vel: np.ndarray) -> tuple[np.ndarray | None, np.ndarray | None]:
        if not self.params.velocity_enabled:
            return None, None
        sig = self.faults.noise_scale * self._vel_sig
        return vel + sig * self.rng.standard_normal(3), np.diag(sig * sig)

    def _no_fix(self, t_s: float, release_s: float, urban: bool) -> GnssFix:
        nan3 = np.full(3, np.nan)
        return GnssFix(t_s, release_s, STATUS_NO_FIX, math.nan, math.nan, math.nan, nan3,
                       np.zeros((3, 3)), False, None, None, urban)
