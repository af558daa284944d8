"""IMU and GNSS output against the ground truth of /vehicle/state, at the sensors' stamps.

IMU: yaw rate minus the true yaw rate [rad/s]; specific force x/y minus the CG's coordinate
acceleration [m/s²] (so lever-arm and tilt terms of a mounted IMU show as error: what a stack
that ignores them would see). GNSS: horizontal distance [m] between the fix, in ENU about the
receiver's origin (the presets' origin is 0°, 0°, 0 m; config/sensors/gnss_*.yaml), and the
true CG position (the antenna lever arm shows as error as well).
"""
from __future__ import annotations

import numpy as np
import pymap3d

from vehicle_sim.report.data import Recording


def _truth(rec: Recording, t: np.ndarray, column: int) -> np.ndarray:
    return np.interp(t, rec.state[:, 0], rec.state[:, column])


def sensor_errors(rec: Recording, origin: tuple[float, float, float] = (0.0, 0.0, 0.0)
                  ) -> dict[str, np.ndarray]:
    """Name -> (n, 2) time [s], error; only the sensors that were recorded."""
    out: dict[str, np.ndarray] = {}
    if len(rec.state) < 2:
        return out
    imu = rec.imu[(rec.imu[:, 0] >= rec.state[0, 0]) & (rec.imu[:, 0] <= rec.state[-1, 0])]
    if len(imu):
        t = imu[:, 0]
        out["IMU yaw rate error [rad/s]"] = np.column_stack((t, imu[:, 6] - _truth(rec, t, 6)))
        out["IMU accel x error [m/s²]"] = np.column_stack((t, imu[:, 1] - _truth(rec, t, 7)))
        out["IMU accel y error [m/s²]"] = np.column_stack((t, imu[:, 2] - _truth(rec, t, 8)))
    fix = rec.gnss[np.isfinite(rec.gnss).all(axis=1)]
    fix = fix[(fix[:, 0] >= rec.state[0, 0]) & (fix[:, 0] <= rec.state[-1, 0])]
    if len(fix):
        e, n, _ = pymap3d.geodetic2enu(fix[:, 1], fix[:, 2], fix[:, 3], *origin)
        t = fix[:, 0]
        err = np.hypot(e - _truth(rec, t, 1), n - _truth(rec, t, 2))
        out["GNSS horizontal error [m]"] = np.column_stack((t, err))
    return out


def error_stats(errors: dict[str, np.ndarray]) -> dict[str, dict[str, float]]:
    """RMS and max |error| per sensor channel, for the JSON."""
    return {name: {"rms": float(np.sqrt(np.mean(d[:, 1] ** 2))),
                   "max_abs": float(np.max(np.abs(d[:, 1]))), "samples": int(len(d))}
            for name, d in errors.items()}
