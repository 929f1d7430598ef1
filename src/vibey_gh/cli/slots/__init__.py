"""`vibey-gh slots …`: one module per command of the group, imported on first use.

Modules: `corpus`, `calibrate`, `soak` (their options declared once in `cli.options`, their
run-until-stopped in `storm.stopping`), `allowed`,
`show` (its words in `slots.report.terminal`), `apply`, `compare`,
`forget`.
"""
