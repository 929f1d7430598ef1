"""`vibey-gh slots …`: one module per command of the group, imported on first use.

Modules: `corpus`, `calibrate`, `soak` (their options declared once in `cli.options`, their
run-until-stopped in `cli.stopping`), `allowed`,
`show` (with `step_table_view`, the step table fitted to a terminal), `apply`, `compare`,
`forget`.
"""
