"""Runs from what agents recorded elsewhere: traces (`traces`) and session logs (`sessions`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ....errors import BadInput
from ....interfaces.prompt_count import PromptCounter
from ..turns import PoolRun, RecordedRuns
from .sessions import runs_from_sessions
from .traces import runs_from_traces


def recorded_runs(
    from_traces: Sequence[Path],
    from_sessions: Sequence[Path],
    *,
    window: int | None,
    fit: str,
    answer_cap: int = 0,
    counter: PromptCounter | None = None,
    size_cap: int | None = None,
) -> RecordedRuns:
    """The runs of every trace and session; traces are fitted into `window` (`fit`) with
    room for answers of `answer_cap` tokens; `counter` sizes sessions' stand-ins. An input
    whose runs, drawn whole, would pass `size_cap` characters is refused (None: unchecked)."""
    runs: list[PoolRun] = []
    sources: list[dict[str, object]] = []
    notes: list[str] = []
    left_out: list[dict[str, str]] = []
    if from_traces:
        if window is None:
            raise BadInput("traces are fitted into a window: give --window")
        traced = runs_from_traces(
            from_traces, window=window, fit=fit, answer_cap=answer_cap, size_cap=size_cap
        )
        runs.extend(traced.runs)
        sources.extend(traced.sources)
        notes.extend(traced.notes)
        left_out.extend(traced.left_out)
    if from_sessions:
        logged = runs_from_sessions(from_sessions, counter, size_cap)
        runs.extend(logged.runs)
        sources.extend(logged.sources)
        notes.extend(logged.notes)
        left_out.extend(logged.left_out)
    return RecordedRuns(runs, sources, notes, left_out)
