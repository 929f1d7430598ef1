"""One step beside production: start the runner, preload, replay, sample, stop.

Modules: `step` (one step), `replay` (N closed-loop workers in a steady state), `stopping` (how
long a step replays), `sampler` (the 1 Hz sampler), `production_memory` (memory charged for
production), `orphans` (a runner left by a crash).
"""
