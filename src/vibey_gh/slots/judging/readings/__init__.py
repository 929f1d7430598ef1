"""A soak's readings judged: bounds over a tick's readings and the drift over hours.

Modules: `reading_bounds` (bounds over a tick's readings, each naming what it needs), `drift`
(a soak's windows, trend and verdict).
"""
