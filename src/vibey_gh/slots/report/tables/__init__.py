"""Tables: the step table built from its columns (full cells, terminal cells, numbers), the
latency table, and the split-window what-if (refusals per step, never evidence).

Modules: `step_table`, `latency_table`, `split_window`.
"""
