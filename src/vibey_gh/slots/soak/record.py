"""The end of a soak: its checkpoint judged (`judging.drift`) and written as a sealed soak file.

The file keeps the raw spans (each decided unit's end time), each window's throughput and its
readings' mean and peak, what each reading means and why any could not be read, and the
judgement; the turns and every tick stay in the run folder it names.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import msgspec
from msgspec import field

from ...interfaces.bounds import Bounds
from ...interfaces.durations import format_duration
from ...interfaces.readings import ReadingSample
from ...interfaces.schema import as_json
from ..evidence.fingerprint import Fingerprint
from ..evidence.soak_file import clear_soak_request, load_soak, soak_path
from ..evidence.soak_history import record_soak_file
from ..judging.metrics import decisive_ends
from ..judging.readings.drift import SoakJudgement, SoakSpan, SoakWindow, judge_soak
from ..judging.records import TurnRecord
from ..measurement.calibration_setup import Environment
from ..report.plotting.plots import plots_available
from ..report.soak_view import SoakView, write_soak_report
from .journal import SoakJournal, Span
from .request import SoakRequest

DONE_WITHIN_S = 1.0


class SoakOutcome(msgspec.Struct, frozen=True):
    """A soak's answer (`slots soak --json`, written by `as_json`): the soak file's path
    under the name `soak`."""

    fingerprint: str
    slots: int | None
    path: Path | None = field(name="soak")
    verdict: str | None
    holds: bool
    reasons: tuple[str, ...] = ()
    measured_s: float = 0.0
    complete: bool = False
    skipped: bool = False
    reason: str = ""
    judgement: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def skipped_for(cls, fingerprint: str, reason: str) -> SoakOutcome:
        return cls(fingerprint, None, None, None, False, skipped=True, reason=reason)


def soak_inputs(
    spans: Sequence[Span],
    turns: dict[int, list[TurnRecord]],
    readings: Sequence[tuple[int, float, ReadingSample]],
    shape: str,
) -> tuple[list[SoakSpan], list[tuple[float, ReadingSample]]]:
    """The judge's inputs: each span's decided ends, each tick at its place in measured time."""
    out: list[SoakSpan] = []
    offsets: dict[int, tuple[float, float]] = {}  # span -> (its start, measured before it)
    measured = 0.0
    for span in spans:
        if span.start is None or span.end is None:
            continue
        ends = decisive_ends(turns.get(span.index, []), span.start, span.end, shape)
        out.append(SoakSpan(span.start, span.end, tuple(sorted(ends))))
        offsets[span.index] = (span.start, measured)
        measured += span.end - span.start
    samples = [
        (offsets[index][1] + sample.t - offsets[index][0], sample)
        for index, _wall, sample in readings
        if index in offsets
    ]
    return out, samples


def first_pass_end(
    spans: Sequence[Span], turns: dict[int, list[TurnRecord]], corpus_turns: set[str]
) -> float | None:
    """When the first span had answered every corpus turn once (the runner's warm-up: its
    caches fill on the first pass), in the soak's measured seconds; None if it never did."""
    for span in spans:
        if span.start is None or span.end is None:
            continue
        first: dict[str, float] = {}
        for turn in turns.get(span.index, []):
            first[turn.turn_id] = min(first.get(turn.turn_id, math.inf), turn.result.ended)
        if not corpus_turns or not corpus_turns <= set(first):
            return None
        return max(0.0, max(first[t] for t in corpus_turns) - span.start)
    return None


def window_series(
    windows: Sequence[SoakWindow], samples: Sequence[tuple[float, ReadingSample]]
) -> list[dict[str, Any]]:
    """Each window's throughput and, per reading, its mean and peak over the window."""
    series = []
    for window in windows:
        inside = [s for at, s in samples if window.at_s <= at < window.at_s + window.length_s]
        values: dict[str, list[float]] = {}
        for sample in inside:
            for name, reading in sample.readings.items():
                if reading.value is not None:
                    values.setdefault(name, []).append(reading.value)
        series.append({
            **as_json(window),
            "readings": {
                name: {"mean": sum(v) / len(v), "max": max(v)} for name, v in sorted(values.items())
            },
        })  # fmt: skip
    return series


def readings_info(samples: Sequence[tuple[float, ReadingSample]]) -> dict[str, Any]:
    """Each reading's unit and meaning, and why those never read were not."""
    units: dict[str, str] = {}
    meanings: dict[str, str] = {}
    read: set[str] = set()
    reasons: dict[str, str] = {}
    for _at, sample in samples:
        for name, reading in sample.readings.items():
            if reading.unit:
                units[name] = reading.unit
            if reading.meaning:
                meanings[name] = reading.meaning
            if reading.value is not None:
                read.add(name)
            elif reading.reason:
                reasons[name] = reading.reason
    missing = {name: why for name, why in sorted(reasons.items()) if name not in read}
    return {"units": units, "meanings": meanings, "missing": missing}


def record_soak(
    req: SoakRequest,
    env: Environment,
    journal: SoakJournal,
    fingerprint: Fingerprint,
    slots: int,
    bounds: Bounds,
    say: Callable[[str], None],
    stopped: str | None = None,
) -> SoakOutcome:
    cal = req.calibration
    turns = journal.turns()
    spans, samples = soak_inputs(journal.spans, turns, journal.readings(), cal.corpus.shape)
    budget = env.device.memory_budget_bytes
    corpus_turns = {t.id for segment in cal.corpus.segments for t in segment.turns}
    warm_up = first_pass_end(journal.spans, turns, corpus_turns)
    judgement: SoakJudgement = judge_soak(
        spans, samples, bounds, req.window_s, budget, warm_up_s=warm_up
    )
    measured = journal.measured_s()
    complete = measured >= req.duration_s - DONE_WITHIN_S
    reasons = judgement.reasons if stopped is None else (f"stopped: {stopped}", *judgement.reasons)
    outcome = SoakOutcome(
        fingerprint.id, slots, None, judgement.verdict, judgement.holds and complete,
        reasons, measured, complete, judgement=as_json(judgement.recorded()),
    )  # fmt: skip
    if not complete and stopped is None:
        return msgspec.structs.replace(
            outcome,
            reason=(
                f"{format_duration(measured)} of {format_duration(req.duration_s)} measured; "
                "run the same command to go on"
            ),
        )
    data = {
        "fingerprint": {"id": fingerprint.id, "fields": dict(fingerprint.fields)},
        "created_at": env.clock.now(),
        "slots": slots,
        "duration_s": req.duration_s,
        "measured_s": measured,
        "window_s": req.window_s,
        "complete": complete,
        "stopped": stopped,
        "corpus_sha256": cal.corpus.corpus_sha256,
        "method": journal.key,
        "bounds": msgspec.to_builtins(bounds),
        "spans": [as_json(s) for s in spans],
        "series": window_series(judgement.windows, samples),
        "readings": readings_info(samples),
        "judgement": {**as_json(judgement.recorded()), "holds": outcome.holds},
        "runs_dir": str(journal.run_dir),
    }
    path = soak_path(env.layout, fingerprint.id, slots)
    # the soak there is kept, never overwritten: replaced into the history, or (complete, and
    # this one stopped) left answering while this one goes to the history
    written = record_soak_file(env.layout, path, fingerprint.id, slots, data)
    if written.replaced or written.kept is None:
        write_soak_report(SoakView(path, load_soak(path)), plots_available())
        outcome = msgspec.structs.replace(outcome, path=path)
    else:
        outcome = msgspec.structs.replace(outcome, path=written.kept)
    journal.path.unlink(missing_ok=True)
    if complete:
        clear_soak_request(env.layout, fingerprint.id)
    say(f"soak recorded: {outcome.path}")
    if (kept := written.sentence()) is not None:
        say(kept)
    return outcome
