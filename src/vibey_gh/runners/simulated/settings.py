"""The simulated runner's settings: its capacity model, `[local_models.simulated]` in the config.

The config reads the table through `read_capacity` so the simulated kind alone says what the
table holds and which values are valid; the config only finds the table and reports problems.
"""

from __future__ import annotations

from typing import Protocol

import msgspec

# the config table that holds the capacity model: [local_models.simulated]
CONFIG_TABLE = "simulated"
# a cached token a million times cheaper than a read one is as good as free
MAX_CACHE_SPEEDUP = 1e6
# a drift of more than half the capacity a step is no slow drift
MAX_DRIFT = 0.5


class SimulatedModel(msgspec.Struct, frozen=True):
    """`[local_models.simulated]`: the capacity model of the simulated runner.

    knee: the slot count after which throughput stops growing. noise: per-turn multiplicative
    spread of the service time (0 = none). seed: of the noise. tokens_per_second: one slot's
    decode speed. scaling: how the runner's speed grows with the turns in flight: N of them
    share min(N, knee)^scaling times one slot's speed (1 = linear up to the knee; 0.5 = √N).
    throttle_after_s: busy seconds (any turn in flight) after which the runner slows down to
    `throttle_factor` of its speed, as a machine that heats up does (None: never). Neither is
    part of the model's name: throttling is the machine's, not the model's, as on real hardware.
    cache_speedup: how many times cheaper a prompt token the slot's cache already holds is
    than one it must read (1 = no cheaper: the cache is reported, not charged).
    cache_tokens: tokens of earlier prompts the runner keeps for any slot beside the prompt each
    slot holds, as llama-server's `--cache-ram` prompt cache does (0 = each slot's own only).
    drift_per_step: the runner's capacity changes by this share at each start after the first
    (a sweep starts it once a step): 0.03 = 3% faster a step, compounded; a machine's drift,
    not part of the model's name.
    """

    knee: int = 4
    noise: float = 0.1
    seed: int = 0
    tokens_per_second: float = 400.0
    scaling: float = 1.0
    throttle_after_s: float | None = None
    throttle_factor: float = 0.5
    cache_speedup: float = 1.0
    cache_tokens: int = 0
    drift_per_step: float = 0.0


class TableReader(Protocol):
    """Typed reads of one config table, failing with the table's file and key."""

    def integer(self, key: str, default: int, *, low: int, high: int) -> int: ...

    def number(self, key: str, default: float, *, low: float, high: float) -> float: ...

    def optional_at_least(self, key: str, low: float) -> float | None: ...

    def reject_unknown(self, extra: set[str] | None = None) -> None: ...


def read_capacity(reader: TableReader) -> SimulatedModel:
    """The capacity model the table holds, the defaults for what it leaves out."""
    defaults = SimulatedModel()
    model = SimulatedModel(
        knee=reader.integer("knee", defaults.knee, low=1, high=1024),
        noise=reader.number("noise", defaults.noise, low=0.0, high=10.0),
        seed=reader.integer("seed", defaults.seed, low=0, high=(1 << 63) - 1),
        tokens_per_second=reader.number(
            "tokens_per_second", defaults.tokens_per_second, low=0.001, high=1e9
        ),
        scaling=reader.number("scaling", defaults.scaling, low=0.0, high=1.0),
        throttle_after_s=reader.optional_at_least("throttle_after_s", 0.0),
        throttle_factor=reader.number(
            "throttle_factor", defaults.throttle_factor, low=0.01, high=1.0
        ),
        cache_speedup=reader.number(
            "cache_speedup", defaults.cache_speedup, low=1.0, high=MAX_CACHE_SPEEDUP
        ),
        cache_tokens=reader.integer("cache_tokens", defaults.cache_tokens, low=0, high=1 << 40),
        drift_per_step=reader.number(
            "drift_per_step", defaults.drift_per_step, low=-MAX_DRIFT, high=MAX_DRIFT
        ),
    )
    reader.reject_unknown()
    return model
