"""Local ENU -> WGS-84 geodetic for one point: pymap3d's enu2geodetic without its array
bookkeeping, so a GNSS fix costs ~4x less (pymap3d spends most of its ~90 us per point in
``isclose`` and boolean indexing written for arrays of points).

The same numpy operations as pymap3d 3.2.0's ``enu2ecef`` + ``ecef2geodetic`` (You, 2000), on the
same values, in the same order and on arrays of the same shapes (its masked steps work on
(1,)-arrays, the others on 0-d ones, and numpy may pick different loops for the two), so the
result is pymap3d's bit for bit; plain arithmetic runs on Python floats (IEEE-754 results are the
same). Only the ordinary case is done here: :meth:`EnuToGeodetic.convert` returns None near the
Earth's axis or centre, near the poles and for non-finite input, and for any other pymap3d
version, and the caller then asks pymap3d.
"""
from __future__ import annotations

import math

import numpy as np
import pymap3d

MIRRORED_VERSION = "3.2.0"  # the pymap3d whose operations are repeated here
_AWAY_M = 1.0  # |u|, hypot(x, y) above this: pymap3d's isclose(., 0) (1e-8 m) is False
_BETA_MAX_RAD = 1.5  # below pymap3d's pole patch (pi / 2 - eps)


class EnuToGeodetic:
    """ENU [m] about a geodetic origin -> (latitude [deg], longitude [deg], altitude [m])."""

    def __init__(self, lat0_deg: float, lon0_deg: float, h0_m: float,
                 ell: pymap3d.Ellipsoid):
        self.enabled = pymap3d.__version__ == MIRRORED_VERSION
        self.origin_ecef = tuple(float(c) for c in pymap3d.geodetic2ecef(
            lat0_deg, lon0_deg, h0_m, ell, deg=True))
        lat0, lon0 = np.radians(lat0_deg), np.radians(lon0_deg)  # enu2uvw, deg=True
        self._cs = tuple(float(f(a)) for a in (lat0, lon0) for f in (np.cos, np.sin))
        self.a, self.b = ell.semimajor_axis, ell.semiminor_axis
        self._e = np.sqrt(self.a ** 2 - self.b ** 2)  # as ecef2geodetic computes E
        self._e2 = float(self._e ** 2)
        self._a2, self._b2 = self.a ** 2, self.b ** 2

    def convert(self, east: float, north: float, up: float) -> tuple[float, float, float] | None:
        """pymap3d.enu2geodetic(east, north, up, origin, ell, deg=True), or None when this
        point needs pymap3d's special cases."""
        if not self.enabled:
            return None
        c_lat, s_lat, c_lon, s_lon = self._cs
        t = c_lat * up - s_lat * north  # enu2uvw
        w = s_lat * up + c_lat * north
        u = c_lon * t - s_lon * east
        v = s_lon * t + c_lon * east
        x0, y0, z0 = self.origin_ecef
        x, y, z = x0 + u, y0 + v, z0 + w  # enu2ecef
        if not math.isfinite(x + y + z):
            return None
        return self._ecef_to_geodetic(x, y, z)

    def _ecef_to_geodetic(self, x: float, y: float, z: float) -> tuple[float, float, float] | None:
        """ecef2geodetic(x, y, z, ell, deg=True) for a point away from the axis and the poles."""
        a, b, e, e2 = self.a, self.b, self._e, self._e2
        # pymap3d's x**2 on a 0-d array is np.square (x * x); its r**2 on the np.float64 that
        # sqrt returns is numpy's scalar power (C pow), kept as such
        r = np.float64(math.sqrt(x * x + y * y + z * z))
        d = float(r ** 2) - e2
        u = math.sqrt(0.5 * d + 0.5 * float(np.hypot(d, float(2 * e * z))))
        hxy = float(np.hypot(x, y))
        if not (u > _AWAY_M and hxy > _AWAY_M):
            return None
        hue = float(np.hypot(u, e))
        beta = float(np.arctan(np.array([hue / u * z / hxy]))[0])  # eqn. 4b, masked: (1,)
        sin_b = float(np.sin(np.array([beta]))[0])
        cos_b = float(np.cos(np.array([beta]))[0])
        beta = beta + ((b * u - a * hue + e2) * sin_b) / (a * hue * 1 / cos_b - e2 * cos_b)
        if not abs(beta) < _BETA_MAX_RAD:
            return None
        lat = np.arctan(a / b * float(np.tan(beta)))  # eqn. 4c, 0-d from here on
        lon = np.arctan2(y, x)
        alt = float(np.hypot(z - b * float(np.sin(beta)), hxy - a * float(np.cos(beta))))
        if x * x / self._a2 + y * y / self._a2 + z * z / self._b2 < 1:  # inside the ellipsoid
            alt = -alt
        return float(np.degrees(lat)), float(np.degrees(lon)), alt
