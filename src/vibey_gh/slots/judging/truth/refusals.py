"""A split-window what-if, step by step: what was served and what was refused as too long.

Replaying a corpus drawn for one window at a smaller one (two slots of half the window hold
the KV cache of one full slot) sends the deeper turns anyway; the runner refuses them. Per
step, judged on each corpus turn's first answer: turns served, turns refused as over the
window, and the shortest refused prompt as the runner counted it (from its refusal, where it
says; None where it does not).
"""

from __future__ import annotations

import msgspec

from ....interfaces.turns import REFUSED_OVER_WINDOW
from ..records import StepRecord
from .fidelity import first_answers


class Refusals(msgspec.Struct, frozen=True):
    served: int
    refused: int
    shortest_refused_tokens: int | None


def refusals_of(step: StepRecord) -> Refusals:
    answers = first_answers(step).values()
    refused = [answer for answer in answers if answer.error == REFUSED_OVER_WINDOW]
    counted = [answer.prompt_tokens for answer in refused if answer.prompt_tokens is not None]
    return Refusals(
        served=sum(1 for answer in answers if answer.served),
        refused=len(refused),
        shortest_refused_tokens=min(counted, default=None),
    )
