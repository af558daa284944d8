"""The DDS settings of a bench's own process: loopback only (vehicle_sim.graph.dds_environment)
and a ROS_DOMAIN_ID of its own unless one is set, so a bench never meets another run."""
from __future__ import annotations

import os


def use_loopback_dds(first_domain: int, span: int) -> dict[str, str]:
    """Set this process's DDS variables; the domain is first_domain + pid % span when
    ROS_DOMAIN_ID is unset. Returns the environment before the loopback profile was added (for
    child processes that, like the runner, add the DDS settings themselves)."""
    from vehicle_sim import graph

    base = dict(os.environ)
    base["ROS_DOMAIN_ID"] = base.get("ROS_DOMAIN_ID") or str(first_domain + os.getpid() % span)
    base.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    os.environ.update(graph.dds_environment("LOCALHOST", base),
                      ROS_DOMAIN_ID=base["ROS_DOMAIN_ID"])
    return base
