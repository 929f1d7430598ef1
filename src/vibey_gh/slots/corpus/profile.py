"""What a corpus is, in numbers and origins: for `slots corpus --show`, the summary and the report.

* runs and turns per run (of the corpus's own turns);
* depth by estimate (a filled run's by the runner's count, where it counted) and tool time
  (`think_s`), as percentiles (nearest rank);
* the shared-prefix share: of all the characters the corpus sends, the share in messages the
  same run's previous turn (in replay order) already sent — what a runner's prompt cache can
  reuse when a worker keeps its prefix warm;
* where it came from: spec commits, the filled run (files it read on, its depth and what
  counted it), traces (ids, fit, scale factors, which gave no run and why, which were not
  drawn), sessions (agent, id, first and last date, the models they were recorded with), with
  counts of sub-agents and of records skipped;
* for runs from session logs that record usage, the depth the log reported against the depth
  the corpus reaches, and the share of it that is the stand-in for what the log left out;
* the runs left out, each with why.

Only counts, ids and dates: nothing of what a prompt or a tool result says.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from ...files import canonical_json
from .turns import Segment

PERCENTILES = (10, 50, 90, 100)


def percentiles(values: Sequence[float]) -> dict[str, float] | None:
    """p10, p50, p90 and max by nearest rank; None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    picked = {}
    for p in PERCENTILES:
        rank = max(1, -(-p * len(ordered) // 100))
        picked["max" if p == 100 else f"p{p}"] = ordered[rank - 1]
    return picked


def shared_prefix_share(segments: Sequence[Segment]) -> float | None:
    """Characters in leading messages equal to the previous turn's, over all characters sent."""
    total = shared = 0
    for segment in segments:
        previous: list[dict[str, Any]] = []
        for turn in segment.turns:
            sizes = [len(canonical_json(message)) for message in turn.messages]
            total += sum(sizes)
            for position, message in enumerate(turn.messages):
                if position >= len(previous) or previous[position] != message:
                    break
                shared += sizes[position]
            previous = turn.messages
    return round(shared / total, 4) if total else None


def corpus_profile(
    segments: Sequence[Segment],
    commits: Sequence[dict[str, Any]],
    sources: Sequence[dict[str, Any]],
    left_out: Sequence[dict[str, str]] = (),
) -> dict[str, Any]:
    turns = [turn for segment in segments for turn in segment.turns]
    per_run = Counter(turn.run_id for turn in turns)
    thinks = [turn.think_s for turn in turns if turn.think_s is not None]
    extra: dict[str, Any] = {}
    recorded = recorded_depths(segments)
    if recorded:
        extra["recorded_depth"] = recorded
    if left_out:
        extra["left_out"] = [dict(entry) for entry in left_out]
    return {
        **extra,
        "runs": len(per_run),
        "turns_per_run": percentiles(list(per_run.values())),
        "depth_estimate": percentiles([turn.depth_estimate for turn in turns]),
        "think_s": percentiles(thinks),
        "turns_with_think_s": len(thinks),
        "shared_prefix_share": shared_prefix_share(segments),
        "origin": origin(commits, sources, set(per_run)),
    }


def recorded_depths(segments: Sequence[Segment]) -> list[dict[str, Any]]:
    """Per run whose log recorded usage: its deepest recorded request, the depth the corpus
    reaches there, the stand-in's share of it, and reached ÷ recorded over its turns."""
    runs: dict[str, list[Any]] = {}
    for segment in segments:
        for turn in segment.turns:
            if turn.recorded_depth:
                runs.setdefault(turn.run_id, []).append(turn)
    found = []
    for run_id, turns in sorted(runs.items()):
        deepest = max(turns, key=lambda turn: (turn.recorded_depth, turn.index))
        reached = deepest.depth_estimate
        found.append(
            {
                "run": run_id,
                "turns": len(turns),
                "deepest_recorded": deepest.recorded_depth,
                "deepest_reached": reached,
                "stand_in": deepest.stand_in or 0,
                "stand_in_share": round((deepest.stand_in or 0) / reached, 4) if reached else 0.0,
                "reached_over_recorded": percentiles(
                    [round(turn.depth_estimate / turn.recorded_depth, 4) for turn in turns]
                ),
            }
        )
    return found


def origin(
    commits: Sequence[dict[str, Any]],
    sources: Sequence[dict[str, Any]],
    drawn: set[str] | None = None,
) -> dict[str, Any]:
    """Where the turns came from; `drawn` (the corpus's run ids) splits traces into those
    replayed, those that gave no run (with why) and those the draw did not take."""
    traces = [source for source in sources if source.get("source") == "trace"]
    fills = [source for source in sources if source.get("source") == "fill" and source.get("run")]
    sessions = [source for source in sources if source.get("source") == "session"]
    found: dict[str, Any] = {}
    if commits:
        found["specs"] = [
            {"repository": commit.get("repository"), "commit": commit.get("commit")}
            for commit in commits
        ]
    if traces:
        runs = [run for trace in traces for run in trace.get("runs", [])]
        factors = [run.get("factor", 1.0) for run in runs]
        found["traces"] = {
            "ids": [trace.get("id") for trace in traces],
            **_trace_outcomes(traces, drawn),
            "fit": sorted({str(trace.get("fit")) for trace in traces}),
            "factor": percentiles(factors),
            "subagents": sum(int(trace.get("subagents", 0)) for trace in traces),
            "dropped_turns": sum(
                int(run.get("dropped_turns", 0))
                for trace in traces
                for run in trace.get("runs", [])
            ),
        }
    if fills:
        found["fill"] = [
            {
                "run": fill.get("run"),
                "files_added": fill.get("files_added", 0),
                "deepest": fill.get("deepest_counted", fill.get("deepest_estimate")),
                # corpora filled before the runner counted say nothing: the estimate filled them
                "counted_by": fill.get("depth_counted_by", "estimate (characters ÷ 3)"),
            }
            for fill in fills
        ]
    if sessions:
        found["sessions"] = [
            {
                "agent": session.get("agent"),
                "id": session.get("id"),
                "started": session.get("started"),
                "ended": session.get("ended"),
                "turns": session.get("turns"),
                "skipped_records": session.get("skipped_records", 0)
                + session.get("unknown_records", 0),
                "agent_version": session.get("agent_version"),
                "models": session.get("models", []),
                # None: a corpus from before usage was read
                "usage": (session.get("unseen_prefix") or {}).get("usage"),
            }
            for session in sessions
        ]
    return found


def _trace_outcomes(traces: Sequence[dict[str, Any]], drawn: set[str] | None) -> dict[str, Any]:
    """Which traces gave no run (and why), and which the draw did not take."""
    no_run: list[dict[str, str]] = []
    not_drawn: list[str] = []
    models: set[str] = set()
    for trace in traces:
        models.update(str(model) for model in trace.get("models", []))
        runs = [run for run in trace.get("runs", []) if isinstance(run, dict)]
        kept = [str(run.get("run")) for run in runs if run.get("turns")]
        if not kept:
            why = (
                "no turn fits the window with its answer"
                if any(run.get("requests") for run in runs)
                else "no request"
            )
            no_run.append({"id": str(trace.get("id")), "why": why})
        elif drawn is not None and not drawn.intersection(kept):
            not_drawn.append(str(trace.get("id")))
    return {"no_run": no_run, "not_drawn": not_drawn, "models": sorted(models)}


def deepest_per_stratum(
    segments: Sequence[Segment], strata: int, window: int
) -> list[dict[str, Any]]:
    """Each stratum's deepest drawn turn by estimate, and its share of the window."""
    deepest = [0] * strata
    for segment in segments:
        if 0 <= segment.stratum < strata:
            deepest[segment.stratum] = max(deepest[segment.stratum], segment.depth_estimate)
    return [
        {"deepest_estimate": depth, "deepest_share": round(depth / window, 4)} for depth in deepest
    ]


# The deepest stratum counts as filled when its deepest turn reaches this share of the window.
FILLED_SHARE = 0.9


def deepest_stratum_note(
    segments: Sequence[Segment],
    window: int,
    sources: Sequence[dict[str, Any]],
    commits: Sequence[dict[str, Any]],
) -> str:
    """Whether the deepest stratum reaches the window, and if not, why it cannot."""
    depth = max((segment.depth_estimate for segment in segments), default=0)
    share = depth / window
    kinds = {str(source.get("source")) for source in sources}
    counted = any("deepest_counted" in source for source in sources)
    unit = "by the runner's count" if counted else "by estimate"
    scaled = any(source.get("fit") == "scale" for source in sources)
    if share >= FILLED_SHARE:
        how = "scaled traces" if scaled else "filled" if "fill" in kinds else "as drawn"
        return f"reaches {share:.0%} of the window {unit} ({how})"
    if "fill" in kinds:
        why = "the repositories hold too little text to fill it"
    elif "trace" in kinds and not scaled:
        why = "--fit drop keeps the traces' own depths"
    elif "trace" in kinds:
        why = "the traces' runs scale to fit with room for their answers"
    elif commits:
        why = "the specs end sooner; --fill-window reads on"
    else:
        why = "recorded runs are as deep as they were recorded"
    return f"cannot be filled: reaches {share:.0%} of the window {unit} ({why})"
