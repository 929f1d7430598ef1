"""The latency a run feels, as pure functions of recorded turns.

Per turn (from a streamed turn's raw timing, `TurnResult`), named as vLLM names them:
  TTFT: from sending the turn to the first chunk carrying answer text or a tool call;
  TPOT: the mean time per output token after the first, (last − first chunk) / (output
    tokens − 1) (what figures before ITL was every gap called ITL);
  decode speed: its inverse, tokens a second after the first;
  ITL: every gap between the turn's token chunks, each its own sample (`token_gaps`).
Per step: p50 and p95 of each (and mean, p90, p99), and of the whole turn's latency, over
the served turns that started inside the measurement window (every N workers busy: the
latency of the load the step measures; all served turns for a step without a window). For a
corpus of whole runs, also p50 and p95 of run latency, over the completed runs that ended
inside the window (all of them without one). Where the turns' ids are given, the p95s (ITL's
too: a turn brings its gaps of every request) are also resampled by turn (`by_turn`), and the
judged latency is paired with one slot's on the same turns, turn by turn (`per_turn`). The
figures are in `latency_figures`, the bounds they are judged against in `latency_bounds`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence

import msgspec

from ....interfaces.turns import TurnResult
from .by_turn import Resampled, grouped_gaps_p95, grouped_p95
from .gap_sample import GapSample
from .latency_figures import (
    OLD_ITL_WAS_TPOT,
    UNSTREAMED,
    LatencyFigures,
    QuantileSample,
    Summary,
    nearest_rank,
)
from .per_turn import per_turn_ratio

ById = Mapping[str, tuple[float, ...]]


class PairedBase(msgspec.Struct, frozen=True):
    """One slot's latencies by turn id, and by run for whole runs (both one-slot runs
    pooled): what a step's judged latency is paired with for `latency_factor`."""

    turns: ById
    runs: ById


def ttft_s(result: TurnResult) -> float | None:
    if not result.streamed or result.first_token is None:
        return None
    return max(0.0, result.first_token - result.started)


def _later_tokens(result: TurnResult) -> int:
    """Tokens after the first: the runner's count where it gave one, else the chunks."""
    tokens = max(result.output_tokens or 0, result.token_chunks)
    return tokens - 1


def tpot_s(result: TurnResult) -> float | None:
    """Mean time per output token after the first; None with fewer than two chunks (no gap
    was seen)."""
    if not result.streamed or result.first_token is None or result.last_token is None:
        return None
    if result.token_chunks < 2 or _later_tokens(result) < 1:
        return None
    return max(0.0, result.last_token - result.first_token) / _later_tokens(result)


def decode_tokens_per_s(result: TurnResult) -> float | None:
    gap = tpot_s(result)
    return 1.0 / gap if gap else None


def _median(values: Sequence[float]) -> float | None:
    if not values:
        return None
    return sorted(values)[nearest_rank(len(values), 0.5) - 1]


def by_id(pairs: Sequence[tuple[str, float]]) -> dict[str, tuple[float, ...]]:
    grouped: dict[str, list[float]] = defaultdict(list)
    for key, value in pairs:
        grouped[key].append(value)
    return {key: tuple(values) for key, values in grouped.items()}


def _by_turn(
    served: Sequence[tuple[str, TurnResult]], measure: Callable[[TurnResult], float | None]
) -> Resampled | None:
    return grouped_p95(by_id([(i, v) for i, r in served if (v := measure(r)) is not None]))


def latency_figures(
    results: Sequence[TurnResult],
    window: tuple[float, float] | None,
    run_latencies: Sequence[float] | None = None,
    measured_to_cap: bool = False,
    *,
    turn_ids: Sequence[str] | None = None,
    run_ids: Sequence[str] | None = None,
    base: PairedBase | None = None,
) -> LatencyFigures:
    """The figures of a step's served turns (those started inside `window` when there is one).

    `run_latencies`: for a corpus of whole runs, the completed runs' latencies (None for one of
    segments); `measured_to_cap`: the step measured until `max_step_seconds`. `turn_ids` and
    `run_ids` (beside `results` and `run_latencies`): resample the p95s by turn, and pair the
    judged latency with `base`'s."""
    ids = turn_ids if turn_ids is not None else [""] * len(results)
    served = [(i, r) for i, r in zip(ids, results, strict=True) if r.served]
    if window is not None:
        inside = [(i, r) for i, r in served if window[0] <= r.started <= window[1]]
        served = inside or served
    turns = [r for _, r in served]
    latencies = [r.latency_s for r in turns]
    ttfts = [v for v in map(ttft_s, turns) if v is not None]
    tpots = [v for v in map(tpot_s, turns) if v is not None]
    gapped = [r for r in turns if r.token_gaps and r.first_token is not None]
    itl = GapSample.of(
        [r.token_gaps for r in gapped],
        sum((r.last_token or 0.0) - (r.first_token or 0.0) for r in gapped),
    )
    speeds = [v for v in map(decode_tokens_per_s, turns) if v is not None]
    timed = sum(1 for r in turns if ttft_s(r) is not None)
    missing = None
    if turns and not timed:
        missing = UNSTREAMED
    figures = LatencyFigures(
        turns=len(turns),
        timed=timed,
        latency_p50_s=_median(latencies),
        latency=QuantileSample.of(latencies),
        ttft_p50_s=_median(ttfts),
        ttft=QuantileSample.of(ttfts),
        tpot_p50_s=_median(tpots),
        tpot=QuantileSample.of(tpots),
        decode_tokens_per_s_p50=_median(speeds),
        missing=missing,
        whole_runs=run_latencies is not None,
        run_p50_s=_median(run_latencies or []),
        run=QuantileSample.of(run_latencies or []),
        measured_to_cap=measured_to_cap,
        itl=itl,
        itl_missing=OLD_ITL_WAS_TPOT if timed and itl is None and tpots else None,
        ttft_s=Summary.of(ttfts),
        tpot_s=Summary.of(tpots),
        itl_s=Summary.of_gaps(itl),
    )
    if turn_ids is None:
        return figures
    factor = None
    if base is not None and run_latencies is not None and run_ids is not None:
        factor = per_turn_ratio(by_id(list(zip(run_ids, run_latencies, strict=True))), base.runs)
    elif base is not None and run_latencies is None:
        factor = per_turn_ratio(by_id([(i, r.latency_s) for i, r in served]), base.turns)
    gaps = grouped_gaps_p95(
        {key: [r.token_gaps for r in results] for key, results in _results_by_id(served).items()}
    )
    return figures.resampled(_by_turn(served, ttft_s), _by_turn(served, tpot_s), factor, gaps)


def _results_by_id(served: Sequence[tuple[str, TurnResult]]) -> dict[str, list[TurnResult]]:
    """The results of each turn id that kept its gaps between tokens."""
    grouped: dict[str, list[TurnResult]] = defaultdict(list)
    for key, result in served:
        if result.token_gaps and result.first_token is not None:
            grouped[key].append(result)
    return grouped
