"""Fidelity: do a step's answers agree with the one-slot answers?

Structure of an answer = the ordered list of (tool name, sorted argument names), or the marker
"text" for a plain answer. Exact = identical text and identical tool calls with arguments.
Agreement = the share of turns served in both runs whose structure (or exact answer) is equal.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ....interfaces.turns import TurnResult
from ..figures import Agreement
from ..records import StepRecord

TEXT_MARKER = "text"


def structure(result: TurnResult) -> tuple[Any, ...]:
    if not result.tool_calls:
        return (TEXT_MARKER,)
    return tuple((call.name, tuple(sorted(call.arguments))) for call in result.tool_calls)


def exact(result: TurnResult) -> tuple[str, str]:
    calls = [{"name": c.name, "arguments": c.arguments} for c in result.tool_calls]
    return (result.text, json.dumps(calls, sort_keys=True))


def first_answers(step: StepRecord) -> dict[str, TurnResult]:
    """Each corpus turn's first answer in the step (a steady-state step sends turns again)."""
    first: dict[str, TurnResult] = {}
    for turn in sorted(step.turns, key=lambda t: t.result.started):
        first.setdefault(turn.turn_id, turn.result)
    return first


def served_by_turn(step: StepRecord) -> dict[str, TurnResult]:
    """The turns whose first answer was served, with that answer."""
    return {turn_id: r for turn_id, r in first_answers(step).items() if r.served}


def agreement(reference: Mapping[str, TurnResult], other: Mapping[str, TurnResult]) -> Agreement:
    common = sorted(set(reference) & set(other))
    structural_matches = sum(structure(reference[t]) == structure(other[t]) for t in common)
    changed = tuple(t for t in common if exact(reference[t]) != exact(other[t]))
    return Agreement(len(common), structural_matches, len(common) - len(changed), changed)


def first_divergence(reference: str, other: str) -> int | None:
    """Character offset where two answers first differ; None when equal."""
    if reference == other:
        return None
    for offset, (a, b) in enumerate(zip(reference, other, strict=False)):
        if a != b:
            return offset
    return min(len(reference), len(other))
