"""Whether a step's answers can be trusted: fidelity, the one-slot floor, what the runner said.

Modules: `fidelity` (answers against the one-slot answers), `trust` (whether the floor can
stand), `reported` (what the runner said of itself), `refusals` (the split-window what-if),
`prefix_cache` (the runner's reported prompt reuse), `replay_findings` (failed served turns,
forbidden log events, answers without a done reason).
"""
