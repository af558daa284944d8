"""The 14-DOF vehicle model (``full14``): sprung body, suspension, wheel travel and spin, Magic
Formula tyres, engine-clutch-gearbox-differential, terrain.

Modules: ``params`` (its YAML parameter groups), ``packing`` (the packed array F_* the kernels
read), ``state_layout`` (state X_* and output O_* indices), ``corners`` (per-corner geometry,
suspension and tyre coefficients), ``magic_formula`` (the tyre), ``drivetrain``, ``terrain``
(heightmap and friction zones), ``dynamics`` (f(x, u, p)), ``discrete`` (gear, clutch lock and
deflection limit between steps) and ``model`` (Full14Model, the VehicleModel).

Nothing is imported here: ``vehicle.params`` imports ``full14.params`` while ``full14.model``
imports ``vehicle.params``.
"""
