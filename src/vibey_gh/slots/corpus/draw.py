"""The draw: segments of consecutive turns, or whole runs, stratified by depth, chosen by seed.

The window is cut into four strata by estimate — quarters: for 65,536 tokens <16k, 16k–32k,
32k–48k and ≥48k (the deepest includes the window itself). A candidate segment is any
`segment_turns` consecutive turns of one run that all fit the window; it belongs to the
stratum of its deepest turn. Each stratum keeps its `segments_per_stratum` best-ranked
candidates, the rank being sha256(seed, segment id) — the same draw on every machine and
Python version. Strata are filled deepest first (deep turns are the scarce ones); each first
takes segments from runs no other segment uses, then from any run, never overlapping a segment
already drawn. A stratum with too few candidates is reported short, never topped up from
another. A turn fits when its prompt and its answer cap fit the window together (the headroom
rule, `turns.fits_with_answer`); turns that do not are dropped and counted, never sent. A run
whose first turn does not fit is left out and named with why; when no run is left, that is an
error (the window cannot hold even the plan).

Whole runs (`draw_runs`, the corpus shape "runs") are drawn the same way with a run as the
unit: a run keeps its turns up to the first one deeper than the window (a lane would have been
refused there; the rest are dropped and counted) and belongs to the stratum of its deepest kept
turn, so a stratum holds the runs that reach that depth. Each stratum keeps its
`segments_per_stratum` best-ranked runs, the rank being sha256(seed, "run", run id); a run sits
in one stratum only, so no two drawn runs overlap. Runs mostly end deep, so the shallow strata
of a whole-run draw are often short: that is reported, never topped up.

With a filled window (`slots.corpus.fill`), the unit holding the pool's deepest turn ranks
first in the deepest stratum, so the filled depth is always replayed.

The corpus lists segments round-robin across strata, shallow to deep (one of each, then the
next of each), so any prefix of it — and any set of concurrent workers — mixes depths as a
storm does.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sized

import msgspec

from ...errors import BadInput
from .pool import Pool
from .turns import PoolRun, Segment, Stratum, answer_room, seeded_rank

STRATA = 4
MIN_WINDOW = 256


class Draw(msgspec.Struct, frozen=True):
    segments: tuple[Segment, ...]
    strata: tuple[Stratum, ...]
    dropped_over_window: int
    # runs that gave no unit: {"run": id, "why": ...}
    left_out: tuple[dict[str, str], ...] = ()


class _Candidate(msgspec.Struct, frozen=True):
    rank: str
    run_id: str
    start: int
    segment: Segment


def stratum_bounds(window: int) -> list[tuple[int, int]]:
    """[low, high) of each stratum by estimate, shallow to deep."""
    return [(q * window // STRATA, (q + 1) * window // STRATA) for q in range(STRATA)]


def stratum_of(depth: int, window: int) -> int:
    lows = [low for low, _ in stratum_bounds(window)]
    return max(q for q, low in enumerate(lows) if depth >= low)


def stratum_name(q: int, window: int) -> str:
    low, high = stratum_bounds(window)[q]
    if q == 0:
        return f"<{_tokens(high)}"
    if q == STRATA - 1:
        return f"≥{_tokens(low)}"
    return f"{_tokens(low)}–{_tokens(high)}"


def draw_segments(
    pool: Pool,
    *,
    window: int,
    segments_per_stratum: int,
    segment_turns: int,
    seed: int,
    deepest_first: bool = False,
    answer_cap: int = 0,
) -> Draw:
    check_draw_options(window, segments_per_stratum, segment_turns)
    candidates: dict[int, list[_Candidate]] = defaultdict(list)
    dropped = 0
    runs, left_out = _runs_that_start(pool, window, answer_cap)
    for run in runs:
        fits = [turn.fits(window, answer_cap) for turn in run.turns]
        dropped += fits.count(False)
        for start in range(len(run.turns) - segment_turns + 1):
            if not all(fits[start : start + segment_turns]):
                continue
            turns = run.turns[start : start + segment_turns]
            segment_id = f"{run.run_id}#{turns[0].index}-{turns[-1].index}"
            stratum = stratum_of(max(turn.depth_estimate for turn in turns), window)
            segment = Segment(segment_id, run.run_id, stratum, turns)
            candidates[stratum].append(
                _Candidate(seeded_rank(seed, "segment", segment_id), run.run_id, start, segment)
            )
    if not candidates:
        raise BadInput(
            f"no run has {segment_turns} consecutive turns inside the window of {window:,} "
            "tokens: lower --segment-turns or raise --window"
        )
    if deepest_first:
        _put_deepest_first(candidates[STRATA - 1])
    chosen = _choose(candidates, segments_per_stratum, segment_turns)
    return _ordered(chosen, candidates, window, segments_per_stratum, dropped, left_out)


def draw_runs(
    pool: Pool,
    *,
    window: int,
    runs_per_stratum: int,
    seed: int,
    deepest_first: bool = False,
    answer_cap: int = 0,
) -> Draw:
    """Whole runs, one unit per run, in the stratum of the run's deepest turn that fits."""
    check_draw_options(window, runs_per_stratum, 1)
    candidates: dict[int, list[Segment]] = defaultdict(list)
    dropped = 0
    runs, left_out = _runs_that_start(pool, window, answer_cap)
    for run in runs:
        over = [not turn.fits(window, answer_cap) for turn in run.turns]
        kept = run.turns[: over.index(True)] if True in over else run.turns
        dropped += len(run.turns) - len(kept)
        stratum = stratum_of(max(turn.depth_estimate for turn in kept), window)
        run_id = f"{run.run_id}#{kept[0].index}-{kept[-1].index}"
        candidates[stratum].append(Segment(run_id, run.run_id, stratum, kept))
    deepest = max((s.depth_estimate for s in candidates[STRATA - 1]), default=None)

    def rank(unit: Segment) -> tuple[bool, str, str]:
        first = deepest_first and unit.depth_estimate == deepest
        return (not first, seeded_rank(seed, "run", unit.id), unit.id)

    chosen = {q: sorted(candidates.get(q, []), key=rank)[:runs_per_stratum] for q in range(STRATA)}
    return _ordered(chosen, candidates, window, runs_per_stratum, dropped, left_out)


def _ordered(
    chosen: dict[int, list[Segment]],
    candidates: Mapping[int, Sized],
    window: int,
    per_stratum: int,
    dropped: int,
    left_out: tuple[dict[str, str], ...],
) -> Draw:
    """The strata's report and the units round-robin across strata, shallow to deep."""
    strata = tuple(
        Stratum(
            name=stratum_name(q, window),
            low=low,
            high=high,
            segments=len(chosen[q]),
            wanted=per_stratum,
            available=len(candidates.get(q, ())),
        )
        for q, (low, high) in enumerate(stratum_bounds(window))
    )
    ordered: list[Segment] = []
    for position in range(per_stratum):
        ordered.extend(chosen[q][position] for q in range(STRATA) if position < len(chosen[q]))
    return Draw(tuple(ordered), strata, dropped, left_out)


def _runs_that_start(
    pool: Pool, window: int, answer_cap: int
) -> tuple[list[PoolRun], tuple[dict[str, str], ...]]:
    """The runs whose first turn fits with its answer, and the others named with why; none
    left is an error naming the first."""
    runs: list[PoolRun] = []
    left_out: list[dict[str, str]] = []
    for run in pool.runs:
        first = run.turns[0]
        if first.fits(window, answer_cap):
            runs.append(run)
            continue
        room = answer_room(first.max_tokens, answer_cap)
        answer = f" and {room:,} for its answer" if room else ""
        left_out.append(
            {
                "run": run.run_id,
                "why": f"turn 0 needs ~{first.depth_estimate:,} tokens{answer}, "
                f"more than the window of {window:,}",
            }
        )
    if not runs:
        first = pool.runs[0].turns[0]
        room = answer_room(first.max_tokens, answer_cap)
        answer = f" plus {room:,} for its answer" if room else ""
        raise BadInput(
            f"window {window:,} is smaller than turn 0 of run {pool.runs[0].run_id} "
            f"(estimate {first.depth_estimate:,} tokens{answer}), as is every run's: "
            "raise --window"
        )
    return runs, tuple(left_out)


def check_draw_options(window: int, segments_per_stratum: int, segment_turns: int) -> None:
    if window < MIN_WINDOW:
        raise BadInput(f"--window must be at least {MIN_WINDOW} tokens, not {window}")
    if segments_per_stratum < 1:
        raise BadInput(f"--segments-per-stratum must be at least 1, not {segments_per_stratum}")
    if segment_turns < 1:
        raise BadInput(f"--segment-turns must be at least 1, not {segment_turns}")


def _put_deepest_first(candidates: list[_Candidate]) -> None:
    """The candidate holding the deepest turn ranks first (a filled window is measured)."""
    if candidates:
        deepest = max(candidates, key=lambda c: (c.segment.depth_estimate, c.segment.id))
        candidates[candidates.index(deepest)] = _Candidate(
            "", deepest.run_id, deepest.start, deepest.segment
        )


def _choose(
    candidates: dict[int, list[_Candidate]], per_stratum: int, segment_turns: int
) -> dict[int, list[Segment]]:
    used_positions: dict[str, set[int]] = defaultdict(set)
    chosen: dict[int, list[Segment]] = {q: [] for q in range(STRATA)}
    for q in reversed(range(STRATA)):
        ranked = sorted(candidates.get(q, []), key=lambda c: (c.rank, c.segment.id))
        for fresh_runs_only in (True, False):
            for candidate in ranked:
                if len(chosen[q]) == per_stratum:
                    break
                taken = used_positions[candidate.run_id]
                span = set(range(candidate.start, candidate.start + segment_turns))
                if (fresh_runs_only and taken) or taken & span:
                    continue
                taken.update(span)
                chosen[q].append(candidate.segment)
    return chosen


def _tokens(count: int) -> str:
    if count >= 1024 and count % 1024 == 0:
        return f"{count // 1024}k"
    return f"{count:,}"
