"""The simulator's map in other tools' formats: Lanelet2 OSM (lanelet2_osm) and a drivable-area
occupancy grid (occupancy). No ROS import here; vehicle_sim_export_map (cli) writes both."""
