"""Measurement: the sweep driver and what measures one step beside production.

Modules: `options` (what a calibration or a soak is asked, checked once, resolved into its
request: `calibrate_as_asked` is `slots calibrate` below its rendering), `calibrate` (the
sweep driver: resume, re-measure, checkpoint, write), `calibration_setup`
(the request, the injected environment, the outcome), `calibration_method` (how a calibration
measures), `calibration_start` (identity and idle checks before the first step), `progress_lines`
(progress as plain lines: the sweep's steps and time left, each step's seconds and turns),
`live_progress` (the same as a live table on a terminal),
`resume` (which checkpoint a rerun continues, and what other options do), `readiness` (what
`doctor` checks that calibrate needs), `evidence_writer` (a sweep as evidence files).

Sub-package: `stepping` (one step beside production: start, preload, replay, sample, stop).
A calibration's real parts are built by
the composition root (`vibey_gh.composition.build_environment`) and handed in as an Environment.

Public surface: `calibrate.run_calibration`, `calibration_setup.CalibrationRequest`,
`calibration_setup.Environment`, `calibration_setup.CalibrationOutcome`.
"""
