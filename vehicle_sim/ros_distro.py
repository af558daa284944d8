"""Which ROS 2 distribution this process runs on, and what follows from it for Fast DDS.

A sourced ROS 2 sets ROS_DISTRO; the README's venv records the distribution of its ``ros-*``
wheels in ``.vehicle_sim-distro`` at its prefix (scripts/setup.sh: kilted unless
VSIM_ROS_DISTRO=jazzy) and sets no ROS_DISTRO.
"""
from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path

DEFAULT_DISTRO = "kilted"  # the set-up's default wheels
VENV_RECORD = ".vehicle_sim-distro"
# Fast DDS 2 (these distributions' rmw_fastrtps) reads its XML profile only from
# FASTRTPS_DEFAULT_PROFILES_FILE; Fast DDS 3 reads FASTDDS_DEFAULT_PROFILES_FILE and warns in
# every process that the other name is deprecated (it still reads it)
FAST_DDS_2_DISTROS = frozenset({"humble", "iron", "jazzy"})
FAST_DDS_3_DISTROS = frozenset({"kilted", "lyrical", "rolling"})
PROFILE_VARIABLES = FASTDDS, FASTRTPS = ("FASTDDS_DEFAULT_PROFILES_FILE",
                                          "FASTRTPS_DEFAULT_PROFILES_FILE")


def ros_distro(env: Mapping[str, str], prefix: str | Path = sys.prefix) -> str:
    """ROS_DISTRO of ``env``; else the distribution the venv at ``prefix`` recorded; else
    :data:`DEFAULT_DISTRO`."""
    if env.get("ROS_DISTRO"):
        return env["ROS_DISTRO"]
    try:
        recorded = (Path(prefix) / VENV_RECORD).read_text().strip()
    except OSError:
        recorded = ""
    return recorded or DEFAULT_DISTRO


def profile_variables(env: Mapping[str, str], prefix: str | Path = sys.prefix) -> tuple[str, ...]:
    """The variables that name a Fast DDS XML profile to this distribution's Fast DDS: both
    for a distribution not known here (a profile not read would leave DDS on every
    interface; a warning is the lesser harm)."""
    distro = ros_distro(env, prefix)
    if distro in FAST_DDS_2_DISTROS:
        return (FASTRTPS,)
    if distro in FAST_DDS_3_DISTROS:
        return (FASTDDS,)
    return PROFILE_VARIABLES
