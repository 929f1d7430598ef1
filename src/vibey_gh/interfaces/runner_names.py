"""The runner kinds' names and where each one's production listens by default.

Shared by the config, which checks its `runner` against these and fills in production_url from
them, and by the runner kinds (`runners/kinds.py`), which `runners/registry.py` names: the one
place that maps a name to its kind is the registry, and a test holds the two lists together.
"""

from __future__ import annotations

RUNNER_NAMES = ("embedded", "llama-server", "ollama", "simulated")
# the kind a config without `runner` (and `calibrate --demo` without --runner) uses
DEFAULT_RUNNER = "embedded"
DEFAULT_PORTS = {"embedded": 8080, "llama-server": 8080, "ollama": 11434, "simulated": 8080}


def default_production_url(name: str) -> str:
    """Where production of kind `name` listens when the config names no production_url;
    KeyError for a name that is no kind (the config refuses those first)."""
    return f"http://127.0.0.1:{DEFAULT_PORTS[name]}"
