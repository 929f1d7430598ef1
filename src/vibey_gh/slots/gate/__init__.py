"""The gate: the answers other tools act on.

Modules: `allowed` (`slots allowed`: how many runs may start now, and why), `apply` (`slots
apply`: give production the slots and the window), `openmetrics` (the answer as gauges),
`judged` (evidence read back and judged once against today's bounds, for `show` and `compare`),
`soak_gate` (`require_soak`: an N above one only where a long enough soak held).

Public surface: `allowed.decide_allowed`, `allowed.AllowedAnswer`, `apply.plan_apply`,
`apply.perform_apply`, `openmetrics.openmetrics_text`. `allowed` must stay fast
(bench/bench_allowed.py): it imports what it needs inside its functions.
"""
