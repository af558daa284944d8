"""State and output layout of the 14-DOF model (indices into its float64 arrays).

States X_* (dynamics.py holds the model): pose (X, Y, Z, roll, pitch, yaw) and linear velocity
in odom, body rates, wheel-centre heights and vertical speeds, wheel spins, tyre deflections
(x, y), engine speed, gear, clutch-lock flag, time since the last shift. Outputs O_* are what
``dynamics.full14_eval`` writes for snapshots. Wheel order FL, FR, RL, RR.
"""
from __future__ import annotations

X_X, X_Y, X_Z, X_ROLL, X_PITCH, X_YAW, X_VX, X_VY, X_VZ, X_P, X_Q, X_R = range(12)
X_ZW, X_VZW, X_OMEGA, X_UX, X_UY = 12, 16, 20, 24, 28  # four entries each, FL FR RL RR
X_ENGINE, X_GEAR, X_LOCK, X_SHIFT_T = 32, 33, 34, 35
N_STATE = 36
# Per-wheel outputs (4 each) and scalars written by full14_eval.
O_FZ, O_FX, O_FY, O_MZ, O_VX, O_RE, O_TAN, O_DELTA, O_FS = (4 * k for k in range(9))
O_AX, O_AY, O_AZ, O_TCLUTCH, O_TENGINE, O_CARRIER = 36, 37, 38, 39, 40, 41
N_OUT = 42
