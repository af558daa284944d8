"""Parameters of the ground-truth node (nodes/ground_truth_node.py): the traffic node's agents
and lights in Autoware's perception types, and the map's drivable area as an OccupancyGrid.

Topic defaults are Autoware's (perception outputs the planning stack reads) and Nav2's
(``map``)."""
from __future__ import annotations

from dataclasses import dataclass

from vehicle_sim.core.config import spec
from vehicle_sim.export.occupancy import GridParams


@dataclass(frozen=True)
class GroundTruthNodeParams:
    """ground_truth_node: traffic/agents and traffic/lights re-published in standard types."""

    map_file: str = spec("maps/urban_grid.yaml")
    """the traffic node's map (light ids, grid)"""
    frame_id: str = spec("map")
    """frame of objects and grid (the traffic node's frame)"""
    agents_topic: str = spec("traffic/agents")
    """TrafficAgentArray in"""
    lights_topic: str = spec("traffic/lights")
    """TrafficLightArray in"""
    state_topic: str = spec("vehicle/state")
    """VehicleState of the ego (range filter)"""
    objects_topic: str = spec("/perception/object_recognition/objects")
    """autoware_perception_msgs/PredictedObjects out; '' = off"""
    tracked_topic: str = spec("/perception/object_recognition/tracking/objects")
    """autoware_perception_msgs/TrackedObjects out; '' = off"""
    traffic_lights_topic: str = spec("/perception/traffic_light_recognition/traffic_signals")
    """autoware_perception_msgs/TrafficLightGroupArray out; '' = off"""
    objects_rate_hz: float = spec(10.0, unit="Hz", gt=0.0, le=1000.0)
    """objects at most at this sim-time rate (Autoware's perception runs at the 10 Hz lidar rate);
    lights go out as they come"""
    range_m: float = spec(0.0, unit="m", ge=0.0, le=20000.0)
    """only agents within this distance of the ego (0 = all; all until the first ego state)"""
    prediction_horizon_s: float = spec(5.0, unit="s", ge=0.0, le=30.0)
    """predicted path length in time (0 = no path); a choice: 5 s covers a junction approach at 50
    km/h"""
    prediction_step_s: float = spec(0.5, unit="s", ge=0.05, le=5.0)
    """time between predicted poses"""
    grid_topic: str = spec("map")
    """nav_msgs/OccupancyGrid of the drivable area (latched); '' = off"""
    grid: GridParams = GridParams()

    def __post_init__(self) -> None:
        if self.prediction_horizon_s / self.prediction_step_s > 600:
            raise ValueError(f"prediction_horizon_s / prediction_step_s = "
                             f"{self.prediction_horizon_s / self.prediction_step_s:.0f} poses "
                             f"per path, at most 600")
