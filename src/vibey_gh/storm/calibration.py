"""The storm's idle-time calibration: the corpus it builds, and the run under the model lock.

The corpus comes from the storm's own lane records — the payloads its lanes really sent — when
they hold at least `min_lane_turns` turns and a segment fits the window; otherwise from the
specs the storm committed to (those in done/), planned and read as the corpus plans them. Its
shape follows the source as `slots corpus` chooses it (docs/decision.md): lane records are
recorded work and replay as whole runs, with the tool time they recorded, decided on runs per
hour; specs carry no tool time and keep segments. `CalibrationPlan.shape` chooses either. The
calibration runs with `if_requested`, so it measures only a fingerprint `slots allowed` asked
for, and holds the model lock exclusively: no lane starts while it runs.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
from msgspec.structs import replace

from ..config import LocalModels
from ..errors import BadInput, VibeyError
from ..interfaces.schema import as_json
from ..slots.corpus.corpus import (
    DEFAULT_SEGMENT_TURNS,
    DEFAULT_SEGMENTS_PER_STRATUM,
    SHAPE_RUNS,
    SHAPE_SEGMENTS,
    Corpus,
    build_corpus,
)
from ..slots.corpus.pool import PoolSources, build_pool
from ..slots.measurement.calibrate import run_calibration
from ..slots.measurement.calibration_setup import (
    CalibrationOutcome,
    CalibrationRequest,
    Environment,
)
from ..slots.measurement.progress_lines import LineProgress
from ..state import StateLayout
from .advice import in_storm_terms
from .lock import model_lock

DEFAULT_MIN_LANE_TURNS = 60
RETRY_FIRST_S = 30.0
RETRY_LONGEST_S = 900.0


def retry_delay(attempts: int) -> float:
    """Seconds to wait after `attempts` failed tries: 30, 60, 120, … up to 15 minutes."""
    return float(min(RETRY_FIRST_S * 2 ** max(attempts - 1, 0), RETRY_LONGEST_S))


class CalibrationBackoff:
    """Which requested fingerprints a storm should calibrate now. One that could not run (a
    production still holding its model within Ollama's keep-alive, the model lock taken) is
    due again after a doubling delay; one that ran is not repeated, whatever it found."""

    def __init__(self) -> None:
        self._ran: set[str] = set()
        self._attempts: dict[str, int] = {}
        self._next_at: dict[str, float] = {}

    def due(self, wanted: set[str], now: float) -> set[str]:
        return {fp for fp in wanted - self._ran if self._next_at.get(fp, float("-inf")) <= now}

    def failed(self, fingerprints: set[str], now: float) -> tuple[int, float]:
        """Record a try that did not run; (its attempt number, seconds until the next)."""
        attempts = 1 + max((self._attempts.get(fp, 0) for fp in fingerprints), default=0)
        delay = retry_delay(attempts)
        for fp in fingerprints:
            self._attempts[fp] = attempts
            self._next_at[fp] = now + delay
        return attempts, delay

    def ran(self, fingerprints: set[str]) -> None:
        self._ran |= fingerprints


class CalibrationPlan(msgspec.Struct, frozen=True):
    """How big an idle-time calibration is. `slots` None = the sweep's own 1, 1, 2, 3, …;
    `max_tokens` None = the config's output cap."""

    slots: tuple[int, ...] | None = None
    max_tokens: int | None = None
    segments_per_stratum: int = DEFAULT_SEGMENTS_PER_STRATUM
    segment_turns: int = DEFAULT_SEGMENT_TURNS
    min_lane_turns: int = DEFAULT_MIN_LANE_TURNS
    max_runs: int | None = None
    threads: int | None = None
    enabled: bool = True
    # None: by the source (whole runs from lane records, segments from specs)
    shape: str | None = None


class IdleRun(msgspec.Struct, frozen=True):
    """What an idle-time run, a calibration or a soak, works with: the config, the state, where
    its corpus comes from (the storm's lane records, else the specs in done/), how big it is,
    and the storm's log."""

    config: LocalModels
    layout: StateLayout
    records_root: Path
    done_folder: Path
    plan: CalibrationPlan
    log: Callable[[str], None]


def storm_corpus(
    records_root: Path,
    done_folder: Path,
    window: int,
    plan: CalibrationPlan,
    answer_cap: int | None = None,
) -> tuple[Corpus, str]:
    """The corpus to calibrate with, and a sentence saying where it came from; its turns leave
    room for answers of `answer_cap` tokens."""

    def draw(pool: Any, recorded: bool) -> Corpus:
        return build_corpus(
            pool,
            window=window,
            segments_per_stratum=plan.segments_per_stratum,
            segment_turns=plan.segment_turns,
            shape=plan.shape or (SHAPE_RUNS if recorded else SHAPE_SEGMENTS),
            answer_cap=answer_cap,
        )

    why_not_lanes: str
    try:
        pool = build_pool(PoolSources(from_lanes=[records_root]))
        if pool.turn_count >= plan.min_lane_turns:
            return draw(pool, True), f"from its own lane records ({pool.turn_count} turns)"
        why_not_lanes = (
            f"its lane records hold {pool.turn_count} turns, fewer than {plan.min_lane_turns}"
        )
    except BadInput as exc:
        why_not_lanes = f"its lane records are not usable ({exc})"
    pool = build_pool(PoolSources(specs=[done_folder]))
    return draw(pool, False), f"from the {pool.specs_used} specs in done/ ({why_not_lanes})"


def outcome_report(outcome: object) -> tuple[dict[str, object], list[str]]:
    """What the storm's summary keeps of a calibration's outcome, and the lines it logs."""
    if not isinstance(outcome, CalibrationOutcome):
        return {"outcome": repr(outcome)}, [f"calibration finished: {outcome!r}"]
    if outcome.skipped:
        return as_json(outcome), [f"calibration skipped: {outcome.reason}"]
    where = f"; evidence {outcome.evidence}" if outcome.evidence else ""
    recorded = "recorded" if outcome.recorded else "NOT recorded"
    said = f"calibration {recorded}: ideal {outcome.ideal} — {outcome.reason}{where}"
    return as_json(outcome), [said, *outcome.evidence_change_lines()]


def idle_request(config: LocalModels, corpus: Corpus, plan: CalibrationPlan) -> CalibrationRequest:
    """What an idle-time run (a calibration, or a soak) measures: `corpus` at the config's
    window, only what `slots allowed` asked for (`if_requested`), answers capped by the plan or
    the config."""
    return CalibrationRequest(
        config=config,
        corpus=corpus,
        window=config.window,
        max_tokens=plan.max_tokens or config.max_tokens,
        if_requested=True,
        threads=plan.threads,
    )


def calibrate_idle(
    run: IdleRun, *, environment: Callable[[LocalModels, StateLayout | None], Environment]
) -> CalibrationOutcome:
    """Take the model lock exclusively, build the corpus, run `calibrate --if-requested` in
    the calibration world `environment` builds (the composition root's)."""
    config, plan, log = run.config, run.plan, run.log
    max_tokens = plan.max_tokens or config.max_tokens
    try:
        with model_lock(run.layout, exclusive=True, wait=False, role="calibration"):
            corpus, origin = storm_corpus(
                run.records_root, run.done_folder, config.window, plan, max_tokens
            )
            log(f"calibration: corpus {_corpus_said(corpus, origin)}")
            request = replace(
                idle_request(config, corpus, plan), slots=plan.slots, max_runs=plan.max_runs
            )
            progress = LineProgress(
                lambda text: log(f"calibration: {in_storm_terms(text)}"), every_s=60.0
            )
            outcome = run_calibration(request, environment(config, run.layout), progress)
    except VibeyError as exc:
        # the calibration's advice names its own options; the storm's log names the storm's
        exc.args = (in_storm_terms(str(exc)),)
        raise
    return replace(outcome, reason=in_storm_terms(outcome.reason))


def _corpus_said(corpus: Corpus, origin: str) -> str:
    units = "whole runs" if corpus.shape == SHAPE_RUNS else "segments"
    return (
        f"{corpus.corpus_sha256[:12]} {origin}: {len(corpus.segments)} {units}, "
        f"{corpus.turn_count} turns"
    )
