"""`slots`: how many runs a device can serve at once, measured and judged (design §5).

Stage packages, in the order a calibration passes them:

- `corpus`: the turns a calibration replays (pool, draw, corpus file, git source).
- `measurement`: the sweep driver and what measures one step on a calibration runner.
- `judging`: pure rules over recorded steps: figures, fidelity, bounds, verdicts, sweep order.
- `evidence`: what is kept on disk: evidence, checkpoints, requests, fingerprint, figures cache.
- `report`: what people read: summary, step table, Markdown and HTML reports, plots, show,
  compare.
- `gate`: the answers other tools act on: `slots allowed`, `slots apply`, OpenMetrics.
- `soak`: one N held for hours beside production, its readings over time, drift decided.

Every `__init__` here is a docstring only: importing a stage imports nothing heavy.
"""
