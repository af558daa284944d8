"""Local ENU frame <-> WGS-84 geodetic coordinates: a thin wrapper over pymap3d.

The local frame (``map``/``odom``, REP-105) is east-north-up about a geodetic origin; altitudes
are above the WGS-84 ellipsoid (as sensor_msgs/NavSatFix expects). pymap3d's WGS-84 ellipsoid
does the work; :mod:`enu_geodetic` repeats its ENU -> geodetic operations for one point without
its array bookkeeping (bit for bit its results; pymap3d itself for the special cases).
"""
from __future__ import annotations

import math

import numpy as np
import pymap3d

from vehicle_sim.core.sensors.enu_geodetic import EnuToGeodetic
from vehicle_sim.core.sensors.params import GeoOrigin


class LocalFrame:
    """An ENU frame anchored at a WGS-84 origin (degrees, metres above the ellipsoid)."""

    def __init__(self, origin: GeoOrigin):
        self.origin = origin
        self._ell = pymap3d.Ellipsoid.from_name("wgs84")
        self._fast = EnuToGeodetic(origin.latitude_deg, origin.longitude_deg, origin.altitude_m,
                                   self._ell)

    def to_geodetic(self, enu_m: np.ndarray) -> tuple[float, float, float]:
        """(latitude_deg, longitude_deg, altitude_m) of a local ENU point [m]."""
        e, n, u = (float(v) for v in enu_m)
        fast = self._fast.convert(e, n, u)
        if fast is not None:
            return fast
        o = self.origin
        lat, lon, alt = pymap3d.enu2geodetic(e, n, u, o.latitude_deg, o.longitude_deg,
                                             o.altitude_m, ell=self._ell, deg=True)
        return float(lat), float(lon), float(alt)

    def to_enu(self, latitude_deg: float, longitude_deg: float, altitude_m: float) -> np.ndarray:
        """Local ENU position [m] (3,) of a geodetic point."""
        if not all(math.isfinite(v) for v in (latitude_deg, longitude_deg, altitude_m)):
            raise ValueError("geodetic coordinates must be finite")
        o = self.origin
        e, n, u = pymap3d.geodetic2enu(latitude_deg, longitude_deg, altitude_m, o.latitude_deg,
                                       o.longitude_deg, o.altitude_m, ell=self._ell, deg=True)
        return np.array([float(e), float(n), float(u)])
