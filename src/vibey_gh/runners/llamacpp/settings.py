"""llama-server's own settings: the config's `runner_args` (flash attention, KV cache types, GPU
layers, batch sizes, …), passed to every calibration step after the arguments the tool owns,
and held in the fingerprint as one shell-quoted string."""

from __future__ import annotations

from ..contract import ProductionSettings

# llama-server arguments the calibration sets itself for every step (slots, window, where it
# listens, which model): production's own values for these would contradict the measurement.
OWNED_RUNNER_ARGS = frozenset(
    {"-m", "--model", "-np", "--parallel", "-c", "--ctx-size", "--host", "--port"}
)
# the fingerprint's key for them
RUNNER_ARGS_KEY = "runner_args"
SOURCE = "config runner_args"


def runner_args_settings(runner_args: tuple[str, ...]) -> ProductionSettings:
    """The fingerprinted settings of a llama-server started with `runner_args`."""
    import shlex  # lazy: only where runner_args are set; the config reads this module always

    if not runner_args:
        return ProductionSettings(source=SOURCE)
    return ProductionSettings({RUNNER_ARGS_KEY: shlex.join(runner_args)}, source=SOURCE)
