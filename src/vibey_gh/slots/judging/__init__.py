"""Judging: pure rules over recorded steps; nothing here reads a file, a clock or the config.

Modules: `records` (what a sweep records, read through `interfaces.json_fields`), `metrics`
(a step's metrics), `runs` (whole runs on replay: runs per hour, run latency), `baseline` (raw
steps to figures, early verdicts), `figures` (every number the judge compares),
`step_findings` (memory, swap and the runner's setup per step), `judge` (verdicts and the ideal
N), `verdicts` (whether the noise decided: reason code and sentence), `sweep` (which N comes
next), `work` (steps read as work done against the one-slot runs' reference costs), `gains` (a
step's gain over one slot, paired where it can be, widened by drift and the planned look).

Sub-packages: `statistics` (intervals, run rate, the knee), `latencies` (latency figures and
bounds), `truth` (fidelity, trust, what the runner reported, refusals), `readings` (bounds
over a tick's readings, a soak's drift).

Public surface: `records.StepRecord`, `baseline.sweep_figures`, `judge.judge_sweep`,
`judge.judge_figures`, `judge.SweepJudgement`, `sweep.sweep_steps`; the limits it judges by
are `interfaces.bounds.Bounds`. The architecture test (tests/test_architecture.py) keeps this
package free of I/O.
"""
