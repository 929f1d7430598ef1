"""Runs from the session logs coding agents keep: Codex CLI rollouts, Claude Code sessions.

Each file is one session and becomes one run (the agent is recognised from its first record
of a known kind; `codex_rollout` and `claude_session` hold what each format says). The log is
read one line at a time, never whole. A turn is one model request: the conversation so far
(OpenAI chat format: system, user, assistant with `tool_calls`, tool results), taken when the
agent's next answer begins. Its `think_s` is the time from the end of the previous answer to
the last input before this one (the agent's tools, and a person's reply where one came in
between), from the records' timestamps; the first turn has none.

Records of a type the reader does not know are skipped and counted; records it knows but
that carry no model input (token counts, UI events) are passed over. A session with no record
of either format is bad input. The text stays in the corpus file (private, 0600); notes and
sources name files, agents, models, session ids, dates and counts, never what was said.

Where the log records what each request cost, the run gets a stand-in of that size for the
system prompt and tool schemas the log leaves out (`unseen_prefix`); a log without usage is
replayed as it is, and its note and source say so.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from msgspec.structs import replace

from ....errors import BadInput, MalformedJson
from ....interfaces.prompt_count import PromptCounter
from ..turns import PoolRun, RecordedRuns
from .claude_session import CLAUDE_TYPES, read_claude_record
from .codex_rollout import CODEX_TYPES, read_codex_record
from .json_lines import input_files, json_records
from .session_builder import SessionBuilder, SessionFacts, safe_name
from .think_time import untrue_note
from .unseen_prefix import with_unseen_prefix

SESSION_SUFFIX = ".jsonl"


def session_files(paths: Sequence[Path]) -> list[Path]:
    """Each path as given, or a folder's `*.jsonl` files (all levels) in path order."""
    return input_files(paths, SESSION_SUFFIX, "session", all_levels=True)


def runs_from_sessions(
    paths: Sequence[Path], counter: PromptCounter | None = None, size_cap: int | None = None
) -> RecordedRuns:
    """One run per session file; `counter` sizes the stand-in for what the log leaves out by
    the runner's own count (None: by estimate). A session whose run, drawn whole, would pass
    `size_cap` characters of corpus is refused as soon as its turns so far say so, before the
    run is built (None: unchecked)."""
    readers = {"codex": read_codex_record, "claude-code": read_claude_record}
    runs: list[PoolRun] = []
    sources: list[dict[str, object]] = []
    notes: list[str] = []
    left_out: list[dict[str, str]] = []
    for path in session_files(paths):
        builder = SessionBuilder(run_id=path.stem)
        facts: SessionFacts | None = None
        pending_unknown: Counter[str] = Counter()
        for where, number, record in json_records(path, notes):
            if facts is None:
                agent = recognise(record)
                if agent is None:
                    pending_unknown[safe_name(_type_of(record))] += 1
                    continue
                facts = SessionFacts(agent, unknown=pending_unknown)
            facts.records += 1
            try:
                readers[facts.agent](record, builder, facts)
            except MalformedJson as exc:
                raise BadInput(f"{where}: {exc}") from None
            if size_cap is not None and builder.output_chars > size_cap:
                raise BadInput(
                    f"{path}: by line {number} its run already holds more than "
                    f"{size_cap >> 20} MiB of turns (its stand-in included), the most a corpus "
                    "of whole runs may hold: draw --shape segments"
                )
        if facts is None:
            raise BadInput(
                f"{path}: type: no record of a Codex rollout or a Claude Code session "
                f"({sum(pending_unknown.values())} record(s) of unknown type)"
            )
        run_id = f"{facts.agent}:{safe_name(facts.session_id or path.stem)}"
        if not builder.turns and facts.side is not None and facts.side.turns:
            # A sub-agent's own log: it shares its parent's session id, so the file names it.
            builder = facts.side
            facts.skipped.pop("sidechain lines", None)
            run_id = f"{run_id}.{safe_name(path.stem)}"
            notes.append(f"session {path.name} is a sub-agent's conversation: its own run")
        named = [
            replace(turn, id=f"{run_id}#{turn.index}", run_id=run_id) for turn in builder.turns
        ]
        turns, prefix = with_unseen_prefix(run_id, named, builder.recorded, counter)
        if turns:
            runs.append(PoolRun(run_id, "session", tuple(turns)))
            if not prefix["usage"]:
                notes.append(
                    f"session {path.name} records no usage: replayed as logged, without the "
                    "system prompt and tool schemas it does not spell out"
                )
        else:
            notes.append(f"session {path.name} holds no model request")
            left_out.append({"run": path.name, "why": "the session holds no model request"})
        notes.extend(_notes(path, facts, builder))
        sources.append({**_source(path, facts, len(turns)), "unseen_prefix": prefix})
    return RecordedRuns(runs, sources, notes, left_out)


def recognise(record: object) -> str | None:
    """The agent whose log holds `record`, by the record's own shape; None if neither."""
    if not isinstance(record, dict):
        return None
    kind = record.get("type")
    if kind in CODEX_TYPES and isinstance(record.get("payload"), dict):
        return "codex"
    if kind in CLAUDE_TYPES and (
        "message" in record or "sessionId" in record or "leafUuid" in record
    ):
        return "claude-code"
    return None


def _type_of(record: object) -> Any:
    return record.get("type") if isinstance(record, dict) else None


def _notes(path: Path, facts: SessionFacts, builder: SessionBuilder) -> list[str]:
    notes = []
    if facts.unknown:
        kinds = ", ".join(f"{name} ×{count}" for name, count in sorted(facts.unknown.items()))
        notes.append(f"session {path.name}: skipped records of unknown type ({kinds})")
    if facts.skipped:
        kinds = ", ".join(f"{name} ×{count}" for name, count in sorted(facts.skipped.items()))
        notes.append(f"session {path.name}: skipped {kinds}")
    return notes + untrue_note(builder.untrue_gaps, f"session {path.name}")


def _source(path: Path, facts: SessionFacts, turns: int) -> dict[str, object]:
    return {
        "source": "session",
        "agent": facts.agent,
        "id": safe_name(facts.session_id) if facts.session_id else path.stem,
        "file": path.name,
        "started": facts.started,
        "ended": facts.ended,
        "agent_version": safe_name(facts.version) if facts.version else None,
        "models": sorted(facts.models),
        "records": facts.records,
        "turns": turns,
        "unknown_records": sum(facts.unknown.values()),
        "skipped_records": sum(facts.skipped.values()),
    }
