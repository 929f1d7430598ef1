"""The latency a run feels, as pure functions of recorded turns.

Per turn (from a streamed turn's raw timing, `TurnResult`):
  TTFT: from sending the turn to the first chunk carrying answer text or a tool call;
  ITL: the mean gap between the later tokens, (last − first chunk) / (output tokens − 1);
  decode speed: its inverse, tokens a second after the first.
Per step: p50 and p95 of each, and of the whole turn's latency, over the served turns that
started inside the measurement window (every N workers busy: the latency of the load the
step measures; all served turns for a step without a window). For a corpus of whole runs,
also p50 and p95 of run latency, over the completed runs that ended inside the window (all of
them without one). The figures and the bounds they are judged against are in
`latency_figures`.
"""

from __future__ import annotations

from collections.abc import Sequence

from ....interfaces.turns import TurnResult
from .latency_figures import UNSTREAMED, LatencyFigures, QuantileSample, nearest_rank


def ttft_s(result: TurnResult) -> float | None:
    if not result.streamed or result.first_token is None:
        return None
    return max(0.0, result.first_token - result.started)


def _later_tokens(result: TurnResult) -> int:
    """Tokens after the first: the runner's count where it gave one, else the chunks."""
    tokens = max(result.output_tokens or 0, result.token_chunks)
    return tokens - 1


def itl_s(result: TurnResult) -> float | None:
    """Mean gap between later tokens; None with fewer than two chunks (no gap was seen)."""
    if not result.streamed or result.first_token is None or result.last_token is None:
        return None
    if result.token_chunks < 2 or _later_tokens(result) < 1:
        return None
    return max(0.0, result.last_token - result.first_token) / _later_tokens(result)


def decode_tokens_per_s(result: TurnResult) -> float | None:
    gap = itl_s(result)
    return 1.0 / gap if gap else None


def _median(values: Sequence[float]) -> float | None:
    if not values:
        return None
    return sorted(values)[nearest_rank(len(values), 0.5) - 1]


def latency_figures(
    results: Sequence[TurnResult],
    window: tuple[float, float] | None,
    run_latencies: Sequence[float] | None = None,
    measured_to_cap: bool = False,
) -> LatencyFigures:
    """The figures of a step's served turns (those started inside `window` when there is one).

    `run_latencies`: for a corpus of whole runs, the completed runs' latencies (None for one of
    segments); `measured_to_cap`: the step measured until `max_step_seconds`."""
    served = [r for r in results if r.served]
    if window is not None:
        inside = [r for r in served if window[0] <= r.started <= window[1]]
        served = inside or served
    latencies = [r.latency_s for r in served]
    ttfts = [v for v in map(ttft_s, served) if v is not None]
    itls = [v for v in map(itl_s, served) if v is not None]
    speeds = [v for v in map(decode_tokens_per_s, served) if v is not None]
    timed = sum(1 for r in served if ttft_s(r) is not None)
    missing = None
    if served and not timed:
        missing = UNSTREAMED
    return LatencyFigures(
        turns=len(served),
        timed=timed,
        latency_p50_s=_median(latencies),
        latency=QuantileSample.of(latencies),
        ttft_p50_s=_median(ttfts),
        ttft=QuantileSample.of(ttfts),
        itl_p50_s=_median(itls),
        itl=QuantileSample.of(itls),
        decode_tokens_per_s_p50=_median(speeds),
        missing=missing,
        whole_runs=run_latencies is not None,
        run_p50_s=_median(run_latencies or []),
        run=QuantileSample.of(run_latencies or []),
        measured_to_cap=measured_to_cap,
    )
