"""The soak: one N held for hours beside production, readings over time, drift decided.

Modules: `request` (what a soak is asked), `asked` (`slots soak` below its rendering: the
soak its options ask for, run under the model lock), `choice` (which N: the evidence's
ideal, or `--slots` within what evidence supports), `journal` (the soak's checkpoint: its run
folder, spans, turns and readings, so a Ctrl-C or a reboot resumes), `sampler` (the readings of
each tick: memory, production's part apart, the runner's resident memory, the platform's
sensors), `soak` (the driver: `run_soak`), `record` (judge and write the sealed soak file).
The rules it is judged by are in `slots.judging.drift`; the file in `slots.evidence.soak_file`.
"""
