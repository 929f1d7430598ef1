"""A corpus's profile (`slots.corpus.profile`) as plain lines, for `slots corpus --show` and
the report: runs, depths, tool time, shared prefix and where the turns came from."""

from __future__ import annotations

from typing import Any


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
        lines.append(
            f"from {len(traces['ids'])} trace(s) ({', '.join(traces['fit'])}; factor "
            f"{_spread(traces['factor'])}; {traces['subagents']} sub-agent run(s); "
            f"{traces['dropped_turns']} turn(s) left out): {', '.join(map(str, traces['ids']))}"
        )
    for session in found.get("sessions", []):
        lines.append(
            f"from {session['agent']} session {session['id']} "
            f"({session['started']} – {session['ended']}, {session['turns']} turns, "
            f"{session['skipped_records']} record(s) skipped)"
        )
    return lines


def _spread(picked: dict[str, float] | None) -> str:
    if not picked:
        return "–"
    return " / ".join(f"{key} {_number(value)}" for key, value in picked.items())


def _number(value: float) -> str:
    return f"{value:,.0f}" if float(value).is_integer() or value >= 100 else f"{value:.3g}"
