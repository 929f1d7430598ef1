"""What a step's raw records show broken whatever the bounds say: a turn served at one slot
that failed, a log event that must never happen during the replay, an answer without a done
reason. Read once, when a step's figures are made (`baseline.step_figures`); the verdict
works on the figures."""

from __future__ import annotations

from collections.abc import Mapping

from ....interfaces.turns import SERVED_REASONS, TurnResult
from ..records import StepRecord

# Log event kinds that break a bound whenever they happen during the replay.
FORBIDDEN_LOG_EVENTS = {
    "truncation": "truncation",
    "context_shift": "context shift",
    "device_failure": "device failure",
    "reload": "model reload",
    "eviction": "eviction",
    "oom": "out of memory",
    "runner_died": "runner died",
}


def failed_served_turns(
    step: StepRecord, reference_served: Mapping[str, TurnResult]
) -> tuple[str, ...]:
    """The turns served at one slot (`reference_served`) that this step failed, with why."""
    return tuple(
        f"{t.turn_id} ({t.result.error or t.result.finish_reason})"
        for t in step.turns
        if t.turn_id in reference_served and not t.result.served
    )


def log_findings(step: StepRecord) -> tuple[str, ...]:
    """A finding per kind of log event that breaks a bound whenever it happens in the replay."""
    counts: dict[str, int] = {}
    for event in step.log_events:
        if event.during_replay and event.kind in FORBIDDEN_LOG_EVENTS:
            counts[event.kind] = counts.get(event.kind, 0) + 1
    return tuple(f"log: {n} × {FORBIDDEN_LOG_EVENTS[kind]}" for kind, n in sorted(counts.items()))


def reasonless_answers(step: StepRecord) -> int:
    """Answers that came back without a done reason the runner gives a whole answer."""
    return sum(
        1
        for t in step.turns
        if t.result.status == 200 and t.result.finish_reason not in SERVED_REASONS
    )
