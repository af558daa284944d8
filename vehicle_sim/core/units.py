"""Physical constants shared by every model (SI units, REP-103)."""
from __future__ import annotations

# standard acceleration of gravity [m/s^2] (3rd CGPM, 1901; ISO 80000-3)
GRAVITY_MPS2 = 9.80665
# the gravity a parameter may set [m/s^2]: Earth's surface spans 9.76-9.83, with a wide margin
GRAVITY_MIN_MPS2, GRAVITY_MAX_MPS2 = 9.0, 10.5
