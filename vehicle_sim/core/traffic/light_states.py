"""Traffic-light states, the one copy of vehicle_sim/TrafficLight's STATE_* codes in the core
(test/ros/test_message_codes.py pins them to the message): the light controller, the agents'
junction kernel (numba folds them in), the ego autopilot and the run report read them here. No
numba or numpy import, so a reader of recordings loads no kernels."""
GREEN, YELLOW, RED, DARK = 0, 1, 2, -1
