"""The bounds a step is held against (design §5): the limits, with their defaults.

The config file's `[local_models.bounds]` table overrides them (`config.py` reads it); the
judge only ever receives a Bounds, so judging reads no configuration itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from typing import Any, TypedDict, cast

from .values import frozen_value


class BoundsJson(TypedDict, total=False):
    """The bounds as JSON (`Bounds.to_json`): what evidence records as in force when it was
    measured; an older file holds fewer keys."""

    wired_ceiling: float
    swap_factor: float
    swap_floor_mb_per_min: float
    fidelity_tolerance: float
    min_gain: float
    patience: int
    confidence: float
    ttft_p95_seconds: float | None
    tpot_p95_seconds: float | None
    itl_p95_seconds: float | None
    latency_factor: float | None


@frozen_value
class Bounds:
    """The limits a step must stay inside (design §5). Re-read at every decision."""

    wired_ceiling: float = 0.80
    swap_factor: float = 2.0
    swap_floor_mb_per_min: float = 64.0
    fidelity_tolerance: float = 0.05
    min_gain: float = 0.10
    patience: int = 2
    # how sure an interval is: a step qualifies when its gain interval at this confidence
    # clears min_gain (design §5 "Steady state and confidence")
    confidence: float = 0.90
    # latency objectives, off (None) unless the operator sets them: a step's p95 time to first
    # token, time per output token (a turn's mean) and inter-token latency (every gap) in
    # seconds, and its p95 turn latency as a multiple of one slot's on the same turns (see
    # slots.judging.latencies)
    ttft_p95_seconds: float | None = None
    tpot_p95_seconds: float | None = None
    itl_p95_seconds: float | None = None
    latency_factor: float | None = None

    @property
    def latency_bounds(self) -> dict[str, float]:
        """The latency bounds that are set, by key."""
        keys = ("ttft_p95_seconds", "tpot_p95_seconds", "itl_p95_seconds", "latency_factor")
        return {k: v for k in keys if (v := getattr(self, k)) is not None}

    def to_json(self) -> BoundsJson:
        # every field, by name: BoundsJson names each of them
        return cast(BoundsJson, {f.name: getattr(self, f.name) for f in fields(self)})

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Bounds:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})
