"""Judging: pure rules over recorded steps; nothing here reads a file, a clock or the config.

Modules: `records` (what a sweep records, read through `interfaces.json_fields`), `stats`
(intervals), `metrics` (a step's metrics), `runs` (whole runs on replay: runs per hour, run
latency), `fidelity` (answers against the one-slot answers), `reported` (what the runner said of
itself), `baseline` (raw steps to figures, early verdicts), `figures` (every number the judge
compares), `bounds` (the limits), `judge` (verdicts and the ideal N), `noise` (whether the noise
decided: reason code and sentence), `sweep` (which N comes next), `trust` (whether the floor can
stand), `reading_bounds` (bounds over a tick's readings, each naming what it needs), `drift` (a
soak's windows, trend and verdict).

Public surface: `bounds.Bounds`, `records.StepRecord`, `baseline.sweep_figures`,
`judge.judge_sweep`, `judge.judge_figures`, `judge.SweepJudgement`, `sweep.sweep_steps`. The
architecture test (tests/test_architecture.py) keeps this package free of I/O.
"""
