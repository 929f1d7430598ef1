"""`vibey-gh slots …`: one module per command of the group, imported on first use.

Modules: `corpus`, `calibrate` (with `calibration_stop`, the run-until-stopped that calibrate
and soak share; their options are declared once in `cli.options`), `soak`, `allowed`,
`show` (with `step_table_view`, the step table fitted to a terminal), `apply`, `compare`,
`forget`.
"""
