"""Documented shim: vehicle_sim is NOT built by setuptools.

The package contains ROS 2 message definitions (msg/*.msg) that rosidl generates through CMake,
so the one build description is CMakeLists.txt, driven by:
  * colcon in a ROS 2 workspace (package.xml declares build_type ament_cmake), or
  * pip through scikit-build-core (pyproject.toml [build-system]): `pip install .`

Running this file only says so; it builds nothing.
"""
import sys

if __name__ == "__main__":
    sys.exit(__doc__ + "\nUse `pip install .` or `colcon build` (see README.md).")
