"""Physical constants shared by every model (SI units, REP-103)."""
from __future__ import annotations

# standard acceleration of gravity [m/s^2] (3rd CGPM, 1901; ISO 80000-3)
GRAVITY_MPS2 = 9.80665
