"""The machine: what it is and how much memory it uses, per OS.

Modules: `probes` (`PlatformProbes`: the one place a platform picks its probes),
`device_probe` (the device probe alone, what `slots allowed` builds), `linux` and
`darwin` (each OS's device facts and memory), `procfs` (Linux /proc reads), `footprint` (the
production runner's memory, its process tree included), `readings` (the readings every
platform gives beyond the shared types).
"""
