"""The numbers the evidence report rests on beyond the step table (pure functions).

How deep the replayed prompts really were against the characters ÷ 3 estimate, how far apart
the two one-slot runs were (the machine's noise), and where answers that changed first drift
from the first one-slot answers.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Mapping, Sequence

import msgspec

from ....interfaces.slots_interface import TurnResult
from ...evidence.store import Evidence
from ...judging.baseline import reference_of
from ...judging.judge import SweepJudgement
from ...judging.metrics import percentile
from ...judging.records import StepRecord
from ...judging.truth.fidelity import first_divergence, served_by_turn
from ..tables.step_table import step_rows


class DepthFacts(msgspec.Struct, frozen=True):
    """The replayed prompts' depth as the runner counted it (served turns of one run).

    ratio: measured tokens ÷ the characters ÷ 3 estimate over the turns that have both, or
    None with `ratio_reason`.
    """

    source: str
    served: int
    minimum: int | None
    median: int | None
    maximum: int | None
    window: int
    ratio: float | None
    matched: int
    ratio_reason: str | None


class NoiseFacts(msgspec.Struct, frozen=True):
    """Throughput of the one-slot runs and their relative spread (None with a reason)."""

    one_slot_turns_per_hour: tuple[float, ...]
    noise: float | None
    reason: str | None


class DivergenceFacts(msgspec.Struct, frozen=True):
    """Where one step's changed answers first differ from the first one-slot run's."""

    name: str
    slots: int
    compared: int
    changed: int
    structure_changed: int
    offsets: tuple[int, ...]

    @property
    def median(self) -> float | None:
        return statistics.median(self.offsets) if self.offsets else None


def answer_text(result: TurnResult) -> str:
    """The answer as compared for divergence: its text, then its tool calls as JSON."""
    if not result.tool_calls:
        return result.text
    calls = [{"name": c.name, "arguments": c.arguments} for c in result.tool_calls]
    return result.text + json.dumps(calls, sort_keys=True, ensure_ascii=False)


def step_names(steps: Sequence[StepRecord], judgement: SweepJudgement) -> list[str]:
    return [row[0] for row in step_rows(steps, judgement)]


def _estimates_of(evidence: Evidence, given: Mapping[str, int] | None) -> Mapping[str, int]:
    if given is not None:
        return given
    recorded = evidence.document.corpus.get("depth_estimates")
    return {str(k): int(v) for k, v in recorded.items()} if isinstance(recorded, dict) else {}


def depth_facts(
    evidence: Evidence, judgement: SweepJudgement, estimates: Mapping[str, int] | None = None
) -> DepthFacts | None:
    steps = evidence.steps
    reference = reference_of(steps) or (steps[0] if steps else None)
    if reference is None:
        return None
    source = step_names(steps, judgement)[steps.index(reference)]
    served = [t for t in reference.turns if t.result.served and t.result.prompt_tokens]
    counts = sorted(int(t.result.prompt_tokens or 0) for t in served)
    median = percentile([float(c) for c in counts], 0.5)
    known = _estimates_of(evidence, estimates)
    pairs = [
        (int(t.result.prompt_tokens or 0), known[t.turn_id]) for t in served if t.turn_id in known
    ]
    ratio: float | None = None
    reason: str | None = None
    if not counts:
        reason = "the runner reported no prompt token counts"
    elif not known:
        reason = "the evidence does not carry the corpus's per-turn estimates"
    elif not pairs:
        reason = "no served turn matches a turn of the corpus's estimates"
    else:
        ratio = sum(p for p, _ in pairs) / max(1, sum(e for _, e in pairs))
    return DepthFacts(
        source=source,
        served=len(served),
        minimum=counts[0] if counts else None,
        median=int(median) if median is not None else None,
        maximum=counts[-1] if counts else None,
        window=reference.window,
        ratio=ratio,
        matched=len(pairs),
        ratio_reason=reason,
    )


def noise_facts(judgement: SweepJudgement) -> NoiseFacts:
    rates = tuple(v.metrics.turns_per_hour for v in judgement.verdicts if v.slots == 1)
    if len(rates) < 2:
        return NoiseFacts(rates, None, "one slot was measured fewer than twice")
    low, high = min(rates), max(rates)
    if low <= 0:
        return NoiseFacts(rates, None, "a one-slot run served nothing")
    return NoiseFacts(rates, (high - low) / low, None)


def divergence_facts(evidence: Evidence, judgement: SweepJudgement) -> list[DivergenceFacts]:
    first = reference_of(evidence.steps)
    reference = served_by_turn(first) if first else {}
    names = step_names(evidence.steps, judgement)
    found = []
    for step, verdict, name in zip(evidence.steps, judgement.verdicts, names, strict=True):
        agreement = verdict.agreement
        if agreement is None:
            continue
        served = served_by_turn(step)
        offsets = []
        for turn_id in agreement.changed_turns:
            offset = first_divergence(answer_text(reference[turn_id]), answer_text(served[turn_id]))
            if offset is not None:
                offsets.append(offset)
        found.append(
            DivergenceFacts(
                name=name,
                slots=step.slots,
                compared=agreement.compared,
                changed=len(agreement.changed_turns),
                structure_changed=agreement.compared - agreement.structural_matches,
                offsets=tuple(sorted(offsets)),
            )
        )
    return found
