"""What `slots corpus --show` says of a corpus: its draw, depths, origins and what was left out."""

from __future__ import annotations

from collections.abc import Sequence

from ...interfaces.schema import as_json
from .corpus import Corpus
from .profile import corpus_profile, deepest_per_stratum, deepest_stratum_note
from .turns import Stratum


def corpus_summary(corpus: Corpus) -> dict[str, object]:
    """What `slots corpus --show --json` prints."""
    return {
        "corpus_sha256": corpus.corpus_sha256,
        "pool_sha256": corpus.pool_sha256,
        "window": corpus.window,
        "seed": corpus.seed,
        "shape": corpus.shape,
        "segments": len(corpus.segments),
        "turns": corpus.turn_count,
        "strata": [stratum.segments for stratum in corpus.strata],
        "strata_detail": [
            {**as_json(stratum), "shortfall": stratum.shortfall, **deepest}
            for stratum, deepest in zip(
                corpus.strata,
                deepest_per_stratum(corpus.segments, len(corpus.strata), corpus.window),
                strict=True,
            )
        ],
        "deepest_stratum": deepest_stratum_note(
            corpus.segments, corpus.window, corpus.sources, corpus.commits
        ),
        "segment_turns": corpus.segment_turns,
        "segments_per_stratum": corpus.segments_per_stratum,
        "answer_cap": corpus.answer_cap,
        "left_out": list(corpus.left_out),
        "max_depth_estimate": corpus.max_depth_estimate,
        # turns whose tool time before them is known, and that time in all
        "timed_turns": sum(1 for turn in corpus.turns() if turn.think_s is not None),
        "think_s_total": sum(turn.think_s or 0.0 for turn in corpus.turns()),
        "pool_runs": corpus.pool.runs,
        "pool_turns": corpus.pool.turns,
        "dropped_over_window": corpus.pool.dropped_over_window,
        "commits": list(corpus.commits),
        "sources": list(corpus.sources),
        "profile": corpus_profile(corpus.segments, corpus.commits, corpus.sources, corpus.left_out),
        # per turn of a session log that recorded usage: what the log said, what the corpus
        # reaches and the stand-in's share of it
        "recorded_turns": [
            {
                "turn": turn.id,
                "recorded": turn.recorded_depth,
                "reached": turn.depth_estimate,
                "stand_in_share": round((turn.stand_in or 0) / max(1, turn.depth_estimate), 4),
            }
            for turn in corpus.turns()
            if turn.recorded_depth is not None
        ],
    }


def shortfalls(strata: Sequence[Stratum]) -> list[str]:
    """One line per short stratum, for the summary."""
    return [
        f"stratum {stratum.name}: {stratum.segments} of {stratum.wanted} segments "
        f"(the pool offered {stratum.available} candidates)"
        for stratum in strata
        if stratum.shortfall
    ]
