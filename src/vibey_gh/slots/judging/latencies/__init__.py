"""Latency: TTFT, ITL and turn latency per step, and the latency bounds.

Modules: `latency` (a step's latencies from its turns), `latency_figures` (their figures,
the distribution-free interval of a p95, the bounds' findings).
"""
