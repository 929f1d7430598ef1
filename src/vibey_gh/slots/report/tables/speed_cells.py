"""A step's pp and tg as llama-bench prints them: tokens/s, mean ± sd (`runner_speed`).

The table's cell is "512.3 ± 40.1" (the mean alone from a single turn); where the runner's
timings give no figure the cell says why ("not recorded", "not reported by the runner").
JSON and CSV get the numbers: `pp_tokens_per_s`, `pp_sd`, `pp_turns` and `pp_why_none`, the
same for `tg`.
"""

from __future__ import annotations

from ...judging.statistics.runner_speed import NOT_RECORDED, RunnerSpeed, TokenRate

PROMPT, GENERATION = "pp", "tg"


def _rate(speed: RunnerSpeed | None, which: str) -> TokenRate:
    if speed is None:  # figures made before the speeds were
        return TokenRate(None, None, 0, NOT_RECORDED)
    return speed.prompt if which == PROMPT else speed.generation


def speed_cell(speed: RunnerSpeed | None, which: str) -> str:
    rate = _rate(speed, which)
    if rate.mean is None:
        return rate.why_none or "—"
    return f"{rate.mean:,.1f}" + ("" if rate.sd is None else f" ± {rate.sd:,.1f}")


def speed_brief(speed: RunnerSpeed | None, which: str) -> str:
    rate = _rate(speed, which)
    return "—" if rate.mean is None else f"{rate.mean:,.0f}"


def speed_values(speed: RunnerSpeed | None, which: str) -> dict[str, object]:
    rate = _rate(speed, which)
    return {
        f"{which}_tokens_per_s": rate.mean,
        f"{which}_sd": rate.sd,
        f"{which}_turns": rate.turns,
        f"{which}_why_none": rate.why_none,
    }
