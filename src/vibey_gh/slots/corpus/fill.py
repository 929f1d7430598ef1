"""Turns as deep as the window, where the source allows (`slots corpus --fill-window`).

Specs end when their files do, often far short of the window, and the deepest stratum is then
never measured at the depth where slots run out of KV cache first. Filling takes the pool's
deepest spec run and lets its lane read on: the repository's other files in path order, each
one that still fits, until the run's last turn is within `FILL_TARGET` of the window by
estimate (a file that would pass the window is passed over; the next may fit). The run is
renamed `<spec>+fill` so a filled corpus never passes for the spec's own run. The draw then puts
the segment (or run) holding the pool's deepest turn first in the deepest stratum.

Traces fill by scaling (`traces`); recorded runs (lanes, transcripts, sessions) are as deep as
they were recorded and cannot be filled: the summary says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ...files import canonical_json
from ...lanes.specs import LaneSpec, resolve_files
from ...lanes.tools import READ_FILE, run_tool, tool_call_message, tool_result_message
from .git_source import SpecTree, TreeCache
from .turns import PoolRun, Turn, estimate_from_chars, json_list_chars, sha256_text

FILL_TARGET = 0.97
FILLED_SUFFIX = "+fill"


def fill_deepest_spec_run(
    specs: Sequence[LaneSpec], runs: list[PoolRun], trees: TreeCache, window: int
) -> tuple[list[PoolRun], dict[str, object]]:
    """`runs` with the deepest spec run (inside the window) read on toward the window."""
    by_id = {spec.id: spec for spec in specs}
    inside = [run for run in runs if run.turns[-1].depth_estimate <= window]
    if not inside:
        return runs, {"source": "fill", "run": None, "files_added": 0, "deepest_estimate": 0}
    deepest = max(inside, key=lambda run: (run.turns[-1].depth_estimate, run.run_id))
    spec = by_id[deepest.run_id]
    tree = trees.open(spec.repository, spec.commit, spec.where)
    filled, added = _read_on(deepest, spec, tree, window)
    facts = {
        "source": "fill",
        "run": filled.run_id,
        "files_added": added,
        "deepest_estimate": filled.turns[-1].depth_estimate,
        "target": FILL_TARGET,
    }
    return [filled if run is deepest else run for run in runs], facts


def _read_on(run: PoolRun, spec: LaneSpec, tree: SpecTree, window: int) -> tuple[PoolRun, int]:
    listing = tree.list_files()
    read = set(resolve_files(spec, listing))
    rest = sorted(path for path in listing if path not in read)
    tree.prefetch(rest)
    last = run.turns[-1]
    messages = list(last.messages)
    message_chars = [len(canonical_json(message)) for message in messages]
    tools_chars = len(canonical_json(last.tools))
    run_id = run.run_id + FILLED_SUFFIX
    turns = [replace(turn, id=f"{run_id}#{turn.index}", run_id=run_id) for turn in run.turns]
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
        depth = estimate_from_chars(json_list_chars([*message_chars, *chars]) + tools_chars)
        if depth > window:
            continue
        messages.extend((call, reply))
        message_chars.extend(chars)
        added += 1
        turns.append(Turn(f"{run_id}#{index}", run_id, index, list(messages), last.tools, depth))
    return PoolRun(run_id, run.source, tuple(turns)), added
