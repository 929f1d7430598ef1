"""The split-window what-if and the prompt cache, as people read them.

The what-if: per step, what was served, what was refused as longer than the window (and the
shortest refused prompt by the runner's count), and the throughput of what was served; in the
summary and the report of such a sweep, and by `slots compare` beside full-window evidence.
The prompt cache: each step's share of prompt tokens the runner reused, where it reports them.
"""

from __future__ import annotations

from ...evidence.store import Evidence
from ...judging.judge import SweepJudgement
from ...judging.truth.prefix_cache import cache_shares
from ...judging.truth.refusals import refusals_of
from .prompt_cache import cache_cell
from .step_table import markdown_table, step_rows, throughput_sentence

COLUMNS = ("step", "slots × window", "served", "refused", "shortest refused", "throughput")


def is_split_window(evidence: Evidence) -> bool:
    return bool(evidence.document.method.get("split_window"))


def split_window_rows(evidence: Evidence, judgement: SweepJudgement) -> list[list[str]]:
    rows = []
    names = step_rows(evidence.steps, judgement)
    for step, verdict, named in zip(evidence.steps, judgement.verdicts, names, strict=True):
        refusals = refusals_of(step)
        shortest = refusals.shortest_refused_tokens
        rows.append(
            [
                named[0],
                f"{step.slots} × {step.window:,}",
                str(refusals.served),
                str(refusals.refused),
                "—" if shortest is None else f"{shortest:,} tokens",
                throughput_sentence(verdict),
            ]
        )
    return rows


def split_window_section(evidence: Evidence, judgement: SweepJudgement) -> list[str]:
    """The what-if's table (Markdown lines), or nothing for an ordinary sweep."""
    if not is_split_window(evidence):
        return []
    corpus_window = evidence.document.corpus.get("window")
    return [
        "## Split window (what-if)",
        "",
        f"The corpus, drawn for a {corpus_window}-token window, replayed at a smaller one: "
        "turns deeper than the window were sent and refused, never cut. Throughput counts "
        "what was served. Never recorded as evidence.",
        "",
        markdown_table(split_window_rows(evidence, judgement), COLUMNS),
    ]


def prefix_cache_lines(evidence: Evidence, judgement: SweepJudgement) -> list[str]:
    """One line: each step's share of prompt tokens the runner took from its cache, where the
    runner says, its first pass over the corpus beside the repeats (nothing when no step's
    turns say)."""
    names = step_rows(evidence.steps, judgement)
    shares = [
        (named[0], shares)
        for step, named in zip(evidence.steps, names, strict=True)
        if (shares := cache_shares(step)).share is not None
    ]
    if not shares:
        return []
    listed = ", ".join(f"{name} {cache_cell(shares)}" for name, shares in shares)
    line = f"Prompt tokens the runner took from its cache (a prefix it already held): {listed}."
    if any(shares.first_pass is not None for _name, shares in shares):
        line += (
            " Each pass over the corpus was marked, so a repeat reuses only what a "
            "conversation shares within itself, as its first pass does."
        )
    return [line]
