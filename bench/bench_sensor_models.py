"""Samples per second of the IMU and GNSS models (run: python bench/bench_sensor_models.py).

Each model is stepped through a 2 s constant-radius turn at its own rate with every preset
error term on; the figures are this machine's, this run's. A node needs >= rate_hz samples/s
(IMU 100-400 Hz, GNSS 10 Hz) with margin for everything else in the process.
"""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from vehicle_sim.core.sensors import GnssModel, GnssZones, ImuModel, Polygon, TrueState

PRESETS = Path(__file__).resolve().parents[1] / "config" / "sensors"


def turning_state(t_s: float) -> TrueState:
    """CG on a 50 m radius circle at 10 m/s (yaw rate 0.2 rad/s), level road."""
    w, v, r = 0.2, 10.0, 50.0
    yaw = w * t_s
    return TrueState(position_m=np.array([r * np.sin(yaw), r * (1 - np.cos(yaw)), 0.0]),
                     rpy_rad=np.array([0.0, 0.0, yaw]), velocity_mps=np.array([v, 0.0, 0.0]),
                     angular_velocity_radps=np.array([0.0, 0.0, w]),
                     acceleration_mps2=np.array([0.0, w * v, 0.0]))


def city(n_blocks: int) -> GnssZones:
    """n_blocks x n_blocks square buildings (20 m, 10 m apart) and one outage square."""
    blocks = tuple(Polygon(((x, y), (x + 20.0, y), (x + 20.0, y + 20.0), (x, y + 20.0)))
                   for x in np.arange(n_blocks) * 30.0 - 400.0
                   for y in np.arange(n_blocks) * 30.0 - 400.0)
    outage = Polygon(((40.0, 40.0), (60.0, 40.0), (60.0, 60.0), (40.0, 60.0)))
    return GnssZones(buildings=blocks, outages=(outage,))


def rate(model, n: int, rate_hz: float) -> float:
    """Samples per second of model.update over n due samples."""
    states = [turning_state(k / rate_hz) for k in range(n)]
    t0 = time.perf_counter()
    for k, s in enumerate(states):
        model.update(k / rate_hz, s)
    return n / (time.perf_counter() - t0)


def main() -> None:
    for name in ("imu_adis16448", "imu_mems_consumer"):
        imu = ImuModel.from_file(PRESETS / f"{name}.yaml", seed=1)
        sps = rate(imu, 20000, imu.params.rate_hz)
        print(f"IMU  {name:18s} {sps:10.0f} samples/s  ({sps / imu.params.rate_hz:6.0f}x "
              f"its {imu.params.rate_hz:.0f} Hz)")
    for name in ("gnss_consumer", "gnss_rtk"):
        for blocks in (0, 27):
            g = GnssModel.from_file(PRESETS / f"{name}.yaml", seed=1, zones=city(blocks))
            sps = rate(g, 5000, g.params.rate_hz)
            print(f"GNSS {name:18s} {blocks * blocks:4d} buildings {sps:9.0f} samples/s  "
                  f"({sps / g.params.rate_hz:6.0f}x its {g.params.rate_hz:.0f} Hz)")


if __name__ == "__main__":
    main()
