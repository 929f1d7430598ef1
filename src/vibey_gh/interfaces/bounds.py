"""The bounds a step is held against (design §5): each declared once, with its type, default,
range and meaning.

The config file's `[local_models.bounds]` table overrides them (`config.read_table`, from this
declaration), evidence records the bounds in force (`msgspec.to_builtins`, read back through
`interfaces.schema.checked`), and the report prints each bound's meaning (`schema.meanings`).
A new bound is one more field here; judging then reads it from the Bounds it receives, and
judging reads no configuration itself.
"""

from __future__ import annotations

from typing import Annotated

import msgspec
from msgspec import Meta

# The bounds as evidence recorded them, kept as written: an older file holds fewer keys, a newer
# one may hold more. The keys `Bounds` declares are checked against it when read.
BoundsJson = dict[str, object]


class Bounds(msgspec.Struct, frozen=True):
    """The limits a step must stay inside (design §5). Re-read at every decision."""

    wired_ceiling: Annotated[
        float,
        Meta(
            ge=0.01,
            le=1.0,
            description="peak wired memory ≤ this share of physical memory (or the cgroup limit)",
        ),
    ] = 0.80
    swap_factor: Annotated[
        float, Meta(ge=0.0, le=1000.0, description="swap-out ≤ this × the one-slot rate …")
    ] = 2.0
    swap_floor_mb_per_min: Annotated[
        float, Meta(ge=0.0, le=1e9, description="… but never judged below this rate (MB/min)")
    ] = 64.0
    fidelity_tolerance: Annotated[
        float,
        Meta(
            ge=0.0,
            le=1.0,
            description="structural agreement ≥ one slot's self-agreement minus this",
        ),
    ] = 0.05
    min_gain: Annotated[
        float,
        Meta(
            ge=0.0,
            le=100.0,
            description="a step qualifies only if the low end of its gain interval over one "
            "slot (the one-slot runs pooled) clears this share",
        ),
    ] = 0.10
    patience: Annotated[
        int,
        Meta(
            ge=1,
            le=100,
            description="the sweep stops after this many steps whose interval is below that gain",
        ),
    ] = 2
    # a step qualifies when its gain interval at this confidence clears min_gain, and a latency
    # bound is met when its p95's interval is under the limit (design §5 "Steady state and
    # confidence"); a planned look reads each at its share of the error
    confidence: Annotated[
        float,
        Meta(
            ge=0.5,
            le=0.999,
            description="how sure each throughput, gain and latency interval is",
        ),
    ] = 0.90
    # latency objectives, off (None) unless the operator sets them (see slots.judging.latencies)
    ttft_p95_seconds: (
        Annotated[
            float,
            Meta(
                gt=0.0,
                description="p95 time to first token ≤ this (s), shown by its interval; "
                "off when unset",
            ),
        ]
        | None
    ) = None
    tpot_p95_seconds: (
        Annotated[
            float,
            Meta(
                gt=0.0,
                description="p95 time per output token (a turn's mean gap) ≤ this (s), shown "
                "by its interval; off when unset",
            ),
        ]
        | None
    ) = None
    itl_p95_seconds: (
        Annotated[
            float,
            Meta(
                gt=0.0,
                description="p95 inter-token latency (every gap between tokens) ≤ this (s), "
                "shown by its interval; off when unset",
            ),
        ]
        | None
    ) = None
    latency_factor: (
        Annotated[
            float,
            Meta(
                ge=1.0,
                description="each turn's latency (each run's, for whole runs) ≤ this × its "
                "own at one slot, at p95 over the turns; off when unset",
            ),
        ]
        | None
    ) = None

    @property
    def latency_bounds(self) -> dict[str, float]:
        """The latency bounds that are set, by key."""
        keys = ("ttft_p95_seconds", "tpot_p95_seconds", "itl_p95_seconds", "latency_factor")
        return {k: v for k in keys if (v := getattr(self, k)) is not None}
