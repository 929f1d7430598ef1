"""A step's prompt processing and generation speed, as llama-bench gives them: pp and tg in
tokens/s, the mean of each turn's rate ± their standard deviation.

Each rate is the runner's own (`interfaces.turns.RunnerTimings`): tokens it read from the prompt
over the time it spent reading them, tokens it wrote over the time it spent writing them. At
N slots a turn's tg is one stream's speed while N - 1 others share the runner, which is what
a user of one slot feels; the step's total output is `out tok/s`. The figures are a pure
function of the turns' recorded timings (the served turns the latency figures count), so
evidence re-read later gives the same figures; where none can be made the figure is None
with the reason, never 0.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import msgspec

from .figure_fields import Amount, Count
from .stats import standard_error

if TYPE_CHECKING:  # stored figures are read without the turns (`figures`)
    from ....interfaces.turns import TurnResult

NOT_RECORDED = "not recorded"
NOT_REPORTED = "not reported by the runner"
NO_TURN_SERVED = "no turn served"
NOTHING_TIMED = "no turn with tokens and time to divide"


class TokenRate(msgspec.Struct, frozen=True):
    """mean / sd: tokens/s over `turns` turns (sd None below two); `why_none` when mean is
    None."""

    mean: Amount | None
    sd: Amount | None
    turns: Count = 0
    why_none: str | None = None

    def __post_init__(self) -> None:
        if (self.mean is None) == (self.why_none is None):
            raise ValueError("why_none: expected a mean or the reason there is none")


class RunnerSpeed(msgspec.Struct, frozen=True):
    """prompt: llama-bench's pp; generation: its tg."""

    prompt: TokenRate
    generation: TokenRate


def token_rate(rates: Sequence[float | None], why_none: str) -> TokenRate:
    """Mean and sample standard deviation of the rates there are; `why_none` without any."""
    known = [rate for rate in rates if rate is not None]
    if not known:
        return TokenRate(None, None, 0, why_none)
    # the sample sd as llama-bench gives it; no `statistics` here: `slots allowed` reads these
    se = standard_error(known)
    sd = se * math.sqrt(len(known)) if se is not None else None
    return TokenRate(math.fsum(known) / len(known), sd, len(known))


def runner_speed(served: Sequence[TurnResult]) -> RunnerSpeed:
    """pp and tg of `served` turns, from the timings each recorded."""
    timed = [r.runner_timings for r in served if r.runner_timings is not None]
    if not served or not timed:
        why = NO_TURN_SERVED if not served else NOT_RECORDED
        return RunnerSpeed(TokenRate(None, None, 0, why), TokenRate(None, None, 0, why))
    prompt_said = any(t.prompt_tokens is not None for t in timed)
    output_said = any(t.output_tokens is not None for t in timed)
    return RunnerSpeed(
        token_rate([t.prompt_per_s for t in timed], NOTHING_TIMED if prompt_said else NOT_REPORTED),
        token_rate([t.output_per_s for t in timed], NOTHING_TIMED if output_said else NOT_REPORTED),
    )
