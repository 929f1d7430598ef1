"""Plots: PNG plots drawn with matplotlib when it is installed, and left out when it is not.

Modules: `plots` (a sweep's plots), `plot_parts` (what they share), `latency_plot` (latency per
step), `soak_plot` (throughput, temperature and power over a soak).
"""
