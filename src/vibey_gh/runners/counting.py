"""The runner `slots corpus` starts to count a prompt's tokens as the runner itself does
(`--fill-window`, and the stand-ins of `--from-sessions` with `--count-with runner`)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from contextlib import AbstractContextManager

from ..interfaces.prompt_count import PromptCounter
from ..state import StateLayout
from .contract import RunnerConfig
from .registry import runner_kind


def prompt_counter(
    wanted: bool,
    config: Callable[[], RunnerConfig],
    state: StateLayout,
    say: Callable[[str], None],
) -> AbstractContextManager[PromptCounter | None]:
    """`slots corpus`: the runner that counts the filled run's depth, started for the build
    (`config`'s kind, read only then); None where the estimate counts (not wanted, or a runner
    kind with no tokenizer, which is said)."""
    if not wanted:
        return contextlib.nullcontext(None)
    chosen = config()
    kind = runner_kind(chosen.runner)
    if not kind.counts_prompts:
        say(
            f"{chosen.runner} has no tokenizer to ask: --fill-window counts by the estimate "
            "(characters ÷ 3), and the corpus says so"
        )
        return contextlib.nullcontext(None)
    say(f"starting the {chosen.runner} runner to count depth as it does")
    return kind.prompt_counter(chosen, state)
