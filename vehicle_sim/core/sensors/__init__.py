"""GPS/GNSS and IMU emulation (pure Python + numpy; no ROS). Public API:

    imu = ImuModel.from_file("config/sensors/imu_adis16448.yaml", seed=1)
    sample = imu.update(t_s, state)          # ImuSample | None
    gnss = GnssModel.from_file("config/sensors/gnss_consumer.yaml", seed=2, zones=GnssZones(...))
    fixes = gnss.update(t_s, state)          # list[GnssFix] released at t_s
    imu.faults.set_bias_step(...); gnss.faults.no_fix = True   # fault inputs

``state`` is any object with the attributes of :class:`TrueState` (VehicleSnapshot qualifies).
"""
from vehicle_sim.core.sensors.faults import GnssFaults, ImuFaults
from vehicle_sim.core.sensors.frames import KinematicState, TrueState
from vehicle_sim.core.sensors.gnss import STATUS_FIX, STATUS_NO_FIX, GnssFix, GnssModel
from vehicle_sim.core.sensors.imu import ImuModel, ImuSample
from vehicle_sim.core.sensors.params import GnssParams, ImuParams
from vehicle_sim.core.sensors.zones import GnssZones, Polygon

__all__ = ["GnssFaults", "ImuFaults", "KinematicState", "TrueState", "STATUS_FIX",
           "STATUS_NO_FIX", "GnssFix", "GnssModel", "ImuModel", "ImuSample", "GnssParams",
           "ImuParams", "GnssZones", "Polygon"]
