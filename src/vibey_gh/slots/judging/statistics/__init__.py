"""The numbers under every figure: intervals and their noise.

Modules: `stats` (standard errors, t quantiles, ratio intervals, quantile ranks), `run_rate`
(runs per hour from run ends), `knee` (the ideal N on throughputs with their noise),
`step_metrics_figures` (a step's metrics as the judge reads them), `figure_fields`
(range-checked readers of a cached figure's fields), `think_law` (capacity under think time
from response times alone, by the closed-system law).
"""
