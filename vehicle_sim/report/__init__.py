"""vehicle_sim_report: plots and a summary JSON from a recorded run (MCAP), without ROS.

data.py reads the recording into arrays, metrics.py computes the summary (pure functions),
plots.py draws the PNGs (matplotlib, Agg), cli.py is the console script.
"""
