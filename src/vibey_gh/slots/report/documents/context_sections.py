"""The report's context sections: the device, the corpus and method, the bounds, and what
the sweep did not measure. Facts from the evidence file, in words and tables."""

from __future__ import annotations

import json
from collections.abc import Mapping

import msgspec

from ....interfaces.bounds import Bounds
from ....interfaces.schema import meanings
from ....interfaces.think import ThinkPolicy
from ...evidence.store import Evidence
from ..tables.step_table import markdown_table
from .corpus_profile import profile_lines
from .facts import DepthFacts

# What no sweep of this kind measures, whatever its numbers: the decision record's list,
# widened. The first two are measured by a sweep of whole runs with think time.
NO_TOOL_TIME = (
    "tool execution between turns: a lane leaves the runner idle while its tools run, which "
    "favours more slots than this closed-loop replay does"
)
NO_WHOLE_RUNS = (
    "whole-lane prefix reuse: each worker replays one segment of consecutive turns, not a "
    "whole lane"
)
NOT_MEASURED = (
    "other models, other windows and other devices: this evidence holds for its fingerprint only",
    NO_TOOL_TIME,
    NO_WHOLE_RUNS,
    "thermals and power: a long storm on a hot machine may run slower than this sweep",
    "stability over hours: one sweep on one device, not a night of lanes",
    "production load beside the model: the production runner was idle by rule during every "
    "kept step",
)


# Where the fields that do not come from the device probe come from.
_OTHER_SOURCES = {
    "runner_kind": "the production runner's identity",
    "runner_version": "the production runner's identity",
    "model_digest": "the production runner's identity",
    "window": "the configuration (tokens per slot)",
}
GIB = 1 << 30


def _field_value(name: str, value: object) -> str:
    if value is None or value == []:
        return "—"
    if isinstance(value, str):
        return value
    if name == "memory_bytes" and isinstance(value, int):
        return f"{value:,} ({value / GIB:.1f} GiB)"
    if name == "window" and isinstance(value, int):
        return f"{value:,}"
    return json.dumps(value, ensure_ascii=False)


def device_section(evidence: Evidence) -> list[str]:
    fields = evidence.fingerprint_fields
    device = evidence.document.device
    sources, missing = device.get("sources") or {}, device.get("missing") or {}
    rows = []
    for name in sorted(fields):
        where = sources.get(name) or _OTHER_SOURCES.get(name, "")
        if name in missing:
            where = f"missing: {missing[name]}"
        rows.append([name, _field_value(name, fields[name]), where])
    lines = [
        "## Device",
        "",
        f"Fingerprint `{evidence.fingerprint}` — the sha256 (first 16 hex digits) of these fields:",
        "",
        markdown_table(rows, ("field", "value", "where it came from")),
    ]
    extra = {k: v for k, v in missing.items() if k not in fields}
    if extra:
        lines.append("")
        lines += [f"- {name}: not read ({why})" for name, why in sorted(extra.items())]
    return lines


def corpus_section(evidence: Evidence) -> list[str]:
    corpus = evidence.document.corpus
    method = evidence.document.method
    lines = [
        "## Corpus and method",
        "",
        f"- corpus `{str(corpus.get('sha256', '?'))[:16]}…`, drawn from pool "
        f"`{str(corpus.get('pool_sha256', '?'))[:16]}…`: {corpus.get('turns')} turns in "
        f"{corpus.get('segments')} {_units(corpus)}, window {corpus.get('window')}",
        f"- think time before each turn: {_think(method)}; decided on "
        f"{'runs/h' if corpus.get('shape') == 'runs' else 'turns/h'}",
        f"- requests: temperature {method.get('temperature')}, seed {method.get('seed')}, "
        f"output cap {method.get('max_tokens')} tokens; runner {method.get('runner')}, "
        f"model {method.get('model')}; steps {method.get('slots')}",
    ]
    profile = corpus.get("profile")
    if isinstance(profile, dict):
        try:
            lines += [f"- {line}" for line in profile_lines(profile)]
        except (KeyError, TypeError, ValueError):
            lines.append("- corpus profile: not readable in this evidence file")
    strata = corpus.get("strata") or []
    if strata:
        rows = [
            [
                str(s.get("name")),
                str(s.get("segments")),
                str(s.get("wanted")),
                str(s.get("available")),
            ]
            for s in strata
        ]
        lines += [
            "",
            markdown_table(rows, ("stratum (estimate)", "segments", "wanted", "available")),
        ]
    return lines


def _bound_value(value: object) -> str:
    return "off" if value is None else f"{value:g}"


def bounds_section(evidence: Evidence, bounds: Bounds) -> list[str]:
    used: dict[str, object] = msgspec.to_builtins(bounds)
    recorded = evidence.document.bounds
    meaning = meanings(type(bounds))
    rows = []
    for name, value in used.items():
        then = recorded.get(name, "—")
        shown_then = then if then == "—" else _bound_value(then)
        rows.append([name, _bound_value(value), shown_then, meaning[name]])
    return [
        "## Bounds",
        "",
        "Also: no turn served at one slot may fail at N; no truncation, context shift, device "
        "failure, reload or eviction in the runner's log; every answer ends stop, length or "
        "tool_calls. At one slot the memory bounds are reported, never refusing: one is the floor.",
        "",
        markdown_table(rows, ("bound", "used here", "when recorded", "meaning")),
    ]


def _units(corpus: Mapping[str, object]) -> str:
    return "whole runs" if corpus.get("shape") == "runs" else "segments"


def _think(method: Mapping[str, object]) -> str:
    """The think-time policy in words; none in evidence from before think time."""
    return ThinkPolicy.from_json(method.get("think")).describe()


def not_measured_section(evidence: Evidence, depth: DepthFacts | None) -> list[str]:
    deepest = depth.maximum if depth else None
    window = depth.window if depth else None
    items = list(NOT_MEASURED)
    if evidence.document.corpus.get("shape") == "runs":
        items.remove(NO_WHOLE_RUNS)
    if ThinkPolicy.from_json(evidence.document.method.get("think")).waits:
        items.remove(NO_TOOL_TIME)
    if deepest is not None and window is not None:
        items.append(
            f"turns deeper than the deepest replayed, {deepest:,} tokens (the window allows "
            f"{window:,})"
        )
    else:
        items.append("the depth of any turn: no prompt token counts were recorded")
    measured = sorted({s.slots for s in evidence.steps})
    if measured:
        items.append(
            "slot counts other than "
            + ", ".join(str(n) for n in measured)
            + ": what the sweep did not reach is not known"
        )
    return ["## Not measured", "", *(f"- {item}" for item in items)]
