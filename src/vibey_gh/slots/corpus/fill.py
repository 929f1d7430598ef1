"""Turns as deep as the window, where the source allows (`slots corpus --fill-window`).

Specs end when their files do, often far short of the window, and the deepest stratum is then
never measured at the depth where slots run out of KV cache first. Filling takes the pool's
deepest spec run and lets its lane read on: the repository's other files in path order, each
one that still fits, until the run's last turn is within `FILL_TARGET` of the window (a file
that would pass the window is passed over; the next may fit). The run is renamed `<spec>+fill`
so a filled corpus never passes for the spec's own run. The draw then puts the segment (or run)
holding the pool's deepest turn first in the deepest stratum.

Depth is counted by the runner when one can count (`PromptCounter`: its chat template and
tokenizer): source code is about four characters a token to SmolLM2, so a fill by the
estimate (characters ÷ 3) stops at three quarters of the window by the runner's count. Each
turn of the filled run then carries the runner's count as its depth, and the fill's source says
what counted (`depth_counted_by`); without a counter the estimate fills, conservatively, and
the source says that. The counter only decides; the text read is the same for any counter, and
the same counter gives the same corpus.

Traces fill by scaling (`traces`); recorded runs (lanes, transcripts, sessions) are as deep as
they were recorded and cannot be filled: the summary says so.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from msgspec.structs import replace

from ...files import canonical_json
from ...interfaces.prompt_count import PromptCounter
from ...lanes.specs import LaneSpec, resolve_files
from ...lanes.tools import READ_FILE, run_tool, tool_call_message, tool_result_message
from .git_source import SpecTree, TreeCache
from .turns import (
    CHARS_PER_TOKEN_ESTIMATE,
    PoolRun,
    Turn,
    estimate_from_chars,
    json_list_chars,
    sha256_text,
)

FILL_TARGET = 0.97
FILLED_SUFFIX = "+fill"
BY_ESTIMATE = f"estimate (characters ÷ {CHARS_PER_TOKEN_ESTIMATE})"
# A file whose estimate by the run's own characters-per-token passes the window by this much is
# passed over without asking the runner (code's density varies a little from file to file).
SCREEN_SLACK = 1.15

Depth = Callable[[list[dict[str, Any]], list[dict[str, Any]], int], int]


def fill_deepest_spec_run(
    specs: Sequence[LaneSpec],
    runs: list[PoolRun],
    trees: TreeCache,
    window: int,
    counter: PromptCounter | None = None,
) -> tuple[list[PoolRun], dict[str, Any]]:
    """`runs` with the deepest spec run (inside the window) read on toward the window."""
    by_id = {spec.id: spec for spec in specs}
    counted_by = counter.counted_by if counter is not None else BY_ESTIMATE
    inside = [run for run in runs if run.turns[-1].depth_estimate <= window]
    if not inside:
        empty = {"run": None, "files_added": 0, "deepest_estimate": 0}
        return runs, {"source": "fill", **empty, "depth_counted_by": counted_by}
    deepest = max(inside, key=lambda run: (run.turns[-1].depth_estimate, run.run_id))
    spec = by_id[deepest.run_id]
    tree = trees.open(spec.repository, spec.commit, spec.where)
    depth = _estimate if counter is None else _counted(counter)
    filled, added = _read_on(deepest, spec, tree, window, depth, counted=counter is not None)
    last = filled.turns[-1]
    facts = {
        "source": "fill",
        "run": filled.run_id,
        "files_added": added,
        "deepest_estimate": estimate_from_chars(_chars(last.messages, last.tools)),
        "target": FILL_TARGET,
        "depth_counted_by": counted_by,
    }
    if counter is not None:
        facts["deepest_counted"] = last.depth_estimate
    return [filled if run is deepest else run for run in runs], facts


def _estimate(messages: list[dict[str, Any]], tools: list[dict[str, Any]], chars: int) -> int:
    return estimate_from_chars(chars)


def _counted(counter: PromptCounter) -> Depth:
    def depth(messages: list[dict[str, Any]], tools: list[dict[str, Any]], chars: int) -> int:
        return counter.count(messages, tools)

    return depth


def _chars(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> int:
    return len(canonical_json(messages)) + len(canonical_json(tools))


def _read_on(
    run: PoolRun, spec: LaneSpec, tree: SpecTree, window: int, depth: Depth, *, counted: bool
) -> tuple[PoolRun, int]:
    listing = tree.list_files()
    read = set(resolve_files(spec, listing))
    rest = sorted(path for path in listing if path not in read)
    tree.prefetch(rest)
    last = run.turns[-1]
    messages = list(last.messages)
    message_chars = [len(canonical_json(message)) for message in messages]
    tools_chars = len(canonical_json(last.tools))
    run_id = run.run_id + FILLED_SUFFIX
    turns = [
        replace(
            turn,
            id=f"{run_id}#{turn.index}",
            run_id=run_id,
            # One unit for the whole run: the runner's count when it counts.
            depth_estimate=(
                depth(turn.messages, turn.tools, _chars(turn.messages, turn.tools))
                if counted
                else turn.depth_estimate
            ),
        )
        for turn in run.turns
    ]
    added = 0
    for path in rest:
        if turns[-1].depth_estimate >= FILL_TARGET * window:
            break
        index = len(turns)
        call_id = "call_" + sha256_text(f"{run_id}\0{index}")[:8]
        arguments = {"path": path}
        call = tool_call_message(call_id, READ_FILE, arguments)
        reply = tool_result_message(call_id, READ_FILE, run_tool(READ_FILE, arguments, tree))
        chars = [len(canonical_json(call)), len(canonical_json(reply))]
        total = json_list_chars([*message_chars, *chars]) + tools_chars
        previous = json_list_chars(message_chars) + tools_chars
        if counted and _clearly_past(turns[-1], total, previous, window):
            continue
        candidate = [*messages, call, reply]
        deep = depth(candidate, last.tools, total)
        if deep > window:
            continue
        messages = candidate
        message_chars.extend(chars)
        added += 1
        turns.append(Turn(f"{run_id}#{index}", run_id, index, list(messages), last.tools, deep))
    return PoolRun(run_id, run.source, tuple(turns)), added


def _clearly_past(previous: Turn, total_chars: int, previous_chars: int, window: int) -> bool:
    """Whether a candidate is surely too deep, at the run's own characters per counted token:
    saves asking the runner about the files that would pass the window by far."""
    chars_per_token = previous_chars / max(1, previous.depth_estimate)
    return total_chars / chars_per_token > SCREEN_SLACK * window
