"""Processes: platform tools run without a shell, process groups, trees, ports and signals.

Modules: `commands` (`CommandRunner`: the real one and a canned one), `processes` (process
groups and sessions), `process_tree` (a process and its children, found by markers), `ports`
(who holds a port), `stopsignals` (the embedded runner's stop signals).
"""
