"""The runner kinds' names and where each one's production listens by default.

The config checks its `runner` against these and fills in production_url from them, so this
module imports nothing of the runners: the kinds themselves (`kinds`, named by `registry`)
import the config. The registry's kinds are exactly these names (a test holds them together).
"""

from __future__ import annotations

from ..errors import BadInput

RUNNER_NAMES = ("embedded", "llama-server", "ollama", "simulated")
# the kind a config without `runner` (and `calibrate --demo` without --runner) uses
DEFAULT_RUNNER = "embedded"
DEFAULT_PORTS = {"embedded": 8080, "llama-server": 8080, "ollama": 11434, "simulated": 8080}
LOOPBACK_URL = "http://127.0.0.1"


def unknown_runner(name: str) -> BadInput:
    return BadInput(f"unknown runner {name!r}; valid runners: {', '.join(RUNNER_NAMES)}")


def default_production_url(name: str) -> str:
    """Where production of kind `name` listens when the config names no production_url."""
    if name not in DEFAULT_PORTS:
        raise unknown_runner(name)
    return f"{LOOPBACK_URL}:{DEFAULT_PORTS[name]}"
