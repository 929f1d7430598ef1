"""A corpus's summary and profile (`slots.corpus.summary`, `slots.corpus.profile`) as plain
lines, for `slots corpus` and the report: its hashes, shape, room for answers, tool time, runs,
depths, shared prefix, where the turns came from and its strata."""

from __future__ import annotations

from typing import Any


def summary_lines(summary: dict[str, Any], heading: str) -> list[str]:
    """What `slots corpus` says of a corpus (`heading`: "wrote PATH" or "corpus PATH")."""
    lines = [heading, f"  corpus sha256  {summary['corpus_sha256']}"]
    lines.append(
        f"  pool sha256    {summary['pool_sha256']}  "
        f"({summary['pool_turns']:,} turns in {summary['pool_runs']:,} runs)"
    )
    units = (
        f"{summary['segments']} whole run{'' if summary['segments'] == 1 else 's'}"
        if summary["shape"] == "runs"
        else f"{summary['segments']} segments of {summary['segment_turns']} turns"
    )
    lines.append(
        f"  window {summary['window']:,}, seed {summary['seed']}, {units} "
        f"({summary['turns']} turns, deepest estimate {summary['max_depth_estimate']:,})"
    )
    if summary["answer_cap"] is not None:
        lines.append(
            f"  every turn leaves room for an answer of {summary['answer_cap']:,} tokens "
            "(or its own smaller cap) in the window"
        )
    if summary["timed_turns"]:
        lines.append(
            f"  think time known for {summary['timed_turns']} of {summary['turns']} turns, "
            f"{summary['think_s_total']:,.1f} s in all (replayed as recorded unless "
            "`slots calibrate --think-time` says otherwise)"
        )
    else:
        lines.append(
            "  no think time recorded: replayed back to back unless "
            "`slots calibrate --think-time` says otherwise"
        )
    if summary["dropped_over_window"]:
        dropped = summary["dropped_over_window"]
        room = " with its answer" if summary["answer_cap"] else ""
        lines.append(f"  dropped {dropped:,} pool turns that do not fit the window{room}")
    for commit in summary["commits"]:
        where = commit["commit"] or f"working tree, {len(commit.get('files', {}))} files hashed"
        lines.append(f"  read {commit['repository']} at {where}")
    lines += [f"  {line}" for line in profile_lines(summary["profile"])]
    lines.append("  strata (by estimate):")
    for stratum in summary["strata_detail"]:
        short = (
            f"  short by {stratum['shortfall']} (the pool offered {stratum['available']})"
            if stratum["shortfall"]
            else ""
        )
        deepest = (
            f"  deepest {stratum['deepest_estimate']:,} ({stratum['deepest_share']:.0%})"
            if stratum["deepest_estimate"]
            else ""
        )
        lines.append(
            f"    {stratum['name']:>10}  {stratum['segments']} of {stratum['wanted']}"
            f"{deepest}{short}"
        )
    lines.append(f"  deepest stratum: {summary['deepest_stratum']}")
    return lines


def profile_lines(profile: dict[str, Any]) -> list[str]:
    """The profile as plain lines (CLI and report)."""
    lines = [f"runs {profile['runs']}, turns per run {_spread(profile['turns_per_run'])}"]
    lines.append(f"depth by estimate {_spread(profile['depth_estimate'])}")
    if profile["think_s"]:
        lines.append(
            f"tool time (s) {_spread(profile['think_s'])} "
            f"({profile['turns_with_think_s']} turns timed)"
        )
    else:
        lines.append("tool time: none recorded")
    share = profile["shared_prefix_share"]
    if share is not None:
        lines.append(f"shared prefix {share:.0%} of the characters sent")
    found = profile["origin"]
    for spec in found.get("specs", []):
        lines.append(f"from specs over {spec['repository']} at {spec['commit'] or 'working tree'}")
    for fill in found.get("fill", []):
        lines.append(
            f"filled {fill['run']}: {fill['files_added']} more file read(s), deepest "
            f"{_number(fill['deepest'])} by {fill['counted_by']}"
        )
    traces = found.get("traces")
    if traces:
        lines.extend(_trace_lines(traces))
    for session in found.get("sessions", []):
        lines.append(
            f"from {session['agent']} session {session['id']} "
            f"({session['started']} – {session['ended']}, {session['turns']} turns, "
            f"{session['skipped_records']} record(s) skipped)"
        )
        if session.get("usage") is False:
            lines.append(
                "  its log records no usage: replayed as logged, without the system prompt "
                "and tool schemas the agent sent"
            )
    lines.extend(_recorded_with(found))
    for run in profile.get("recorded_depth", []):
        lines.append(
            f"{run['run']}: deepest request {_number(run['deepest_recorded'])} tokens by its "
            f"log, {_number(run['deepest_reached'])} in the corpus "
            f"({run['stand_in_share']:.0%} stand-in for what the log leaves out); corpus ÷ log "
            f"{_spread(run['reached_over_recorded'])} over {run['turns']} turn(s)"
        )
    # traces that gave no run are named with their trace above
    named = {entry["id"] for entry in (traces or {}).get("no_run", [])}
    for entry in profile.get("left_out", []):
        if entry["run"] not in named:
            lines.append(f"left out {entry['run']}: {entry['why']}")
    return lines


def _trace_lines(traces: dict[str, Any]) -> list[str]:
    no_run = traces.get("no_run", [])
    not_drawn = traces.get("not_drawn", [])
    failed = {entry["id"] for entry in no_run}
    replayed = [str(i) for i in traces["ids"] if i not in failed and i not in not_drawn]
    lines = [
        f"from {len(replayed)} of {len(traces['ids'])} trace(s) (fit "
        f"{', '.join(traces['fit'])}; factor {_spread(traces['factor'])}; "
        f"{traces['subagents']} sub-agent run(s); {traces['dropped_turns']} turn(s) left out): "
        f"{', '.join(replayed) or 'none'}"
    ]
    lines += [f"trace {entry['id']} gave no run: {entry['why']}" for entry in no_run]
    if not_drawn:
        lines.append(f"trace(s) not drawn (their strata were full): {', '.join(not_drawn)}")
    return lines


def _recorded_with(found: dict[str, Any]) -> list[str]:
    """The agents and models the recorded work came from, and what that means for answers."""
    agents = sorted(
        {
            f"{session['agent']} {session.get('agent_version') or ''}".strip()
            for session in found.get("sessions", [])
        }
    )
    models = sorted(
        {str(model) for session in found.get("sessions", []) for model in session.get("models", [])}
        | set(found.get("traces", {}).get("models", []))
    )
    if not agents and not models:
        return []
    said = "recorded with " + ", ".join(agents) if agents else "recorded"
    said += f" on {', '.join(models)}" if models else " (the log names no model)"
    return [
        said,
        "a local model's answers differ in length from the recorded ones: the same prompts, "
        "not the same work after them",
    ]


def _spread(picked: dict[str, float] | None) -> str:
    if not picked:
        return "–"
    return " / ".join(f"{key} {_number(value)}" for key, value in picked.items())


def _number(value: float) -> str:
    return f"{value:,.0f}" if float(value).is_integer() or value >= 100 else f"{value:.3g}"
