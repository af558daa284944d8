"""What the vehicle model objects share (``SteppedModel``: the state, the held controls and the
jitted step) and what the planar models (single-track, kinematic) share in addition
(``PlanarModel``: packed planar parameters, initial state, input layout)."""
from __future__ import annotations

import math

import numpy as np

from vehicle_sim.core.vehicle.integrators import all_finite, integrator, model_step
from vehicle_sim.core.vehicle.interface import Controls, NonFiniteState
from vehicle_sim.core.vehicle.params import VehicleParams, pack

# Input layout shared by the planar models (one float64 array per step).
U_STEER, U_THROTTLE, U_BRAKE, U_CLUTCH, U_GEAR, U_HANDBRAKE = range(6)
N_INPUT = 6


def controls_array(c: Controls) -> np.ndarray:
    """Controls -> the kernels' input array (indices U_*)."""
    return np.array([c.steer_rad, c.throttle, c.brake, c.clutch, float(c.gear),
                     1.0 if c.handbrake else 0.0])


def stepper(name: str):
    """The integrator ``name`` (integrators.INTEGRATORS), jitted once per process."""
    return integrator(name)


class SteppedModel:
    """Base of every VehicleModel object: packed parameters ``_p``, the jitted step
    ``_advance`` (integrators.model_step), the state ``_x`` and the held controls ``_u`` (the
    input array of the Controls object ``_held``: a loop passes the same object step after
    step, its array is built once)."""

    _held: Controls | None = None

    @property
    def state(self) -> np.ndarray:
        """A copy of the state vector (indices of the model's module)."""
        return self._x.copy()

    def step(self, controls: Controls, dt_s: float) -> None:
        """Advance by dt_s [s] with the controls held."""
        if not dt_s > 0.0 or not math.isfinite(dt_s):
            raise ValueError(f"dt_s must be a positive finite time step, got {dt_s}")
        self._hold(controls)
        x = self._advance(self._x, self._u, self._p, dt_s)
        if not all_finite(x):
            bad = int(np.flatnonzero(~np.isfinite(x))[0])
            raise NonFiniteState(f"model {self.name}: state[{bad}] would be {x[bad]} after "
                                 f"this step; state kept")
        self._x = x

    def _hold(self, controls: Controls) -> None:
        """Hold ``controls`` (Controls is frozen: the same object, the same array)."""
        if controls is not self._held:
            self._u = controls_array(controls)
            self._held = controls


class PlanarModel(SteppedModel):
    """Base of SingleTrackModel and KinematicModel; subclasses set ``name``, ``dynamics`` (their
    jitted (f, after_step), see integrators.advance) and ``initial_state``, and write
    ``snapshot``."""

    name = ""
    dynamics: tuple = ()

    def __init__(self, params: VehicleParams, integrator: str = "rk4"):
        self.params = params
        self._p = pack(params)
        self._advance = model_step(stepper(integrator), *self.dynamics)
        self.reset()

    def initial_state(self, x_m: float, y_m: float, yaw_rad: float,
                      speed_mps: float) -> np.ndarray:
        raise NotImplementedError

    def reset(self, x_m: float = 0.0, y_m: float = 0.0, yaw_rad: float = 0.0,
              speed_mps: float = 0.0) -> None:
        """At (x, y) [m] heading yaw [rad] with forward speed [m/s], controls released."""
        self._x = self.initial_state(x_m, y_m, yaw_rad, speed_mps)
        self._hold(Controls())
