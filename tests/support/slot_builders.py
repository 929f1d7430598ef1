"""Builders for StepRecords with chosen answers, memory and log events (pure-judge tests)."""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import strategies as st
from msgspec.structs import replace

from vibey_gh.interfaces.bounds import Bounds
from vibey_gh.interfaces.slots_interface import ToolCall, TurnResult
from vibey_gh.slots.judging.records import LogEventRecord, ProductionRecord, StepRecord, TurnRecord

GB = 1_000_000_000

# Any bounds a config could hold, for property tests of the judge and of `allowed`.
bounds_strategy = st.builds(
    Bounds,
    wired_ceiling=st.floats(0.3, 1.0),
    swap_factor=st.floats(0.5, 4),
    swap_floor_mb_per_min=st.floats(0, 200),
    fidelity_tolerance=st.floats(0, 0.3),
    min_gain=st.floats(0, 1),
    patience=st.integers(1, 3),
)


def answer(
    text: str = "",
    tools: Sequence[tuple[str, dict[str, object]]] = (),
    *,
    status: int | None = 200,
    reason: str | None = "stop",
    started: float = 0.0,
    ended: float = 1.0,
    output_tokens: int = 10,
    error: str | None = None,
) -> TurnResult:
    return TurnResult(
        status=status,
        finish_reason=reason,
        prompt_tokens=100,
        output_tokens=output_tokens,
        text=text,
        tool_calls=tuple(ToolCall(name, dict(args)) for name, args in tools),
        started=started,
        ended=ended,
        error=error,
    )


def make_step(
    index: int,
    slots: int,
    answers: Sequence[TurnResult],
    *,
    duration: float = 100.0,
    wired_gb: float = 4.0,
    budget_gb: float = 24.0,
    swap_mb: float = 0.0,
    log_kinds: Sequence[str] = (),
    production: ProductionRecord | None = None,
    steady: bool = False,
) -> StepRecord:
    """Turns t0..tk spread evenly over `duration` seconds; memory flat at `wired_gb`.

    steady: a steady-state step (with a measurement window); False: the one-pass method."""
    count = max(len(answers), 1)
    turns = []
    for i, result in enumerate(answers):
        start = duration * i / count
        stretched = replace(result, started=start, ended=start + duration / count)
        turns.append(TurnRecord(f"t{i}", f"s{i // 3}", i % slots, stretched))
    timeline = (
        (0.0, int(wired_gb * GB), int(wired_gb * GB), 0.5, 0, 0, None, None),
        (
            duration,
            int(wired_gb * GB),
            int(wired_gb * GB),
            0.5,
            0,
            int(swap_mb * 1e6 * duration / 60),
            None,
            None,
        ),
    )
    return StepRecord(
        index=index,
        slots=slots,
        window=4096,
        attempt=1,
        started_at=1000.0 + index,
        ended_at=1000.0 + index + duration,
        load_seconds=1.0,
        turns=tuple(turns),
        timeline=timeline,
        memory_budget_bytes=int(budget_gb * GB),
        log_events=tuple(LogEventRecord(kind, f"line {kind}") for kind in log_kinds),
        production=production or ProductionRecord(polls=10),
        corpus_turns=len(answers),
        measurement={"why_ended": "built for a test"} if steady else None,
    )


def same_answers(n: int = 10) -> list[TurnResult]:
    return [
        answer("plain") if i % 2 else answer(tools=[("read_file", {"path": f"f{i}.py"})])
        for i in range(n)
    ]


def runs_loop(
    slots: int,
    runs: int,
    *,
    turns_per_run: int = 2,
    turn_s: float = 1.0,
    think_s: float = 0.0,
    index: int = 2,
    failed: frozenset[tuple[int, int]] = frozenset(),
    shape: str = "runs",
) -> StepRecord:
    """`slots` workers, each replaying `runs` runs of `turns_per_run` turns back to back, with
    `think_s` before every turn; (worker, run) pairs in `failed` have their last turn fail."""
    turns: list[TurnRecord] = []
    for worker in range(slots):
        clock = 0.0
        for run in range(runs):
            run_id = f"r{(run + worker) % 7}"
            for turn in range(turns_per_run):
                clock += think_s
                last = turn == turns_per_run - 1
                status = 500 if last and (worker, run) in failed else 200
                result = answer("plain", status=status, started=clock, ended=clock + turn_s)
                segment = f"{run_id}#0-{turns_per_run - 1}"
                turns.append(TurnRecord(f"{run_id}#{turn}", segment, worker, result, think_s, last))
                clock += turn_s
    turns.sort(key=lambda t: t.result.ended)
    return StepRecord(
        index=index,
        slots=slots,
        window=4096,
        attempt=1,
        started_at=0.0,
        ended_at=1.0,
        load_seconds=None,
        turns=tuple(turns),
        timeline=((0.0, 4 * GB, 4 * GB, 0.5, 0, 0), (100.0, 4 * GB, 4 * GB, 0.5, 0, 0)),
        memory_budget_bytes=24 * GB,
        corpus_turns=14,
        measurement={"why_ended": "test"},
        shape=shape,
    )
