"""Runs from lane records and transcripts: requests as a lane or a chat tool recorded them.

From lane records (`--from-lanes DIR`): every `events.jsonl` under DIR, one JSON object a
line. Lines whose "event" is "turn" are requests as the lane sent them::

    {"event": "turn", "run_id": "state-layout-1", "index": 0,
     "payload": {"messages": [...], "tools": [...]}}

`run_id` defaults to the events file's folder (relative to DIR) and `index` to the order of the
run's turn events; a second event with the same run and index (a retry) is counted and skipped.
"reply" events give each turn's think time (`slots.corpus.think_time`); other events are
ignored. A last line that does not parse (a crash mid-write) is skipped and
reported; any other bad line is an error.

From transcripts (`--from-transcripts FILE`, or `--from-chat-logs FILE`): JSON Lines, one
conversation a line, with `messages` (OpenAI chat format), optional `tools` and optional `id`
(default "<file name>:<line>"); a line may also be the bare `messages` array, as chat logs
exported by agent tools often are. Every prefix that ends just before an assistant message is
a turn. Messages may carry a `timestamp`, which gives each turn's think time
(`slots.corpus.think_time`) and is not sent.

Both hold every turn's whole payload, so their size is what their runs give a corpus of whole
runs: `check_input_size` refuses a set past the cap before a byte is read.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from msgspec.structs import replace

from ....errors import BadInput
from ....guarded import InputProblem, loads_json, read_regular_text
from ..turns import PoolRun, Turn, check_messages, depth_estimate
from .think_time import (
    event_time,
    lane_think_times,
    transcript_think_times,
    untrue_note,
    without_timestamps,
)

EVENTS_FILE = "events.jsonl"
# A lane's transcript of a long session is large; anything past this is not one.
TRANSCRIPT_SIZE_LIMIT = 1 << 30


def check_input_size(files: Sequence[Path], named: Path, size_cap: int | None) -> None:
    """Lane records and transcripts hold every turn's whole payload: their size is what their
    runs give a corpus of whole runs, known before a byte is read."""
    if size_cap is None:
        return
    total = sum(path.stat().st_size for path in files)
    if total > size_cap:
        raise BadInput(
            f"{named}: its runs would put ~{total >> 20} MiB of turns in a corpus of whole runs "
            f"(the size of what it recorded), more than the {size_cap >> 20} MiB a corpus file "
            "may hold: draw --shape segments, or give fewer lanes"
        )


def events_files(folder: Path) -> list[Path]:
    if not folder.is_dir():
        raise BadInput(f"no such lanes folder: {folder}")
    return sorted(folder.rglob(EVENTS_FILE))


def runs_from_lanes(folder: Path) -> tuple[list[PoolRun], list[str]]:
    """Runs from every `events.jsonl` under `folder` (format in the module docstring)."""
    files = events_files(folder)
    if not files:
        raise BadInput(f"no {EVENTS_FILE} file under {folder}")
    collected: dict[str, dict[int, Turn]] = {}
    sent: dict[str, dict[int, tuple[float | None, float | None]]] = {}
    answered: dict[str, dict[int, tuple[float | None, float | None]]] = {}
    notes: list[str] = []
    duplicates = 0
    for file in files:
        default_run = file.parent.relative_to(folder).as_posix()
        if default_run == ".":
            default_run = folder.name
        counters: dict[str, int] = {}
        for where, _, event in _json_lines(file, tolerate_torn_tail=True, notes=notes):
            if not isinstance(event, dict):
                continue
            if event.get("event") == "reply":
                _note_reply(event, default_run, answered)
                continue
            if event.get("event") != "turn":
                continue
            run_id = event.get("run_id", default_run)
            if not isinstance(run_id, str) or not run_id:
                raise BadInput(f"{where}: 'run_id' must be a non-empty string")
            index = event.get("index", counters.get(run_id, 0))
            if not isinstance(index, int) or isinstance(index, bool) or index < 0:
                raise BadInput(f"{where}: 'index' must be a whole number >= 0")
            counters[run_id] = index + 1
            messages, tools = _payload(event.get("payload"), where)
            run = collected.setdefault(run_id, {})
            if index in run:
                duplicates += 1
                continue
            run[index] = _turn(run_id, index, messages, tools)
            sent.setdefault(run_id, {})[index] = event_time(event)
    if duplicates:
        notes.append(f"skipped {duplicates} repeated turn event(s) (retries) in {folder}")
    runs = []
    untrue = 0
    for run_id, turns in collected.items():
        indices = sorted(turns)
        thinks, dropped = lane_think_times(sent.get(run_id, {}), answered.get(run_id, {}), indices)
        untrue += dropped
        timed = (replace(turns[i], think_s=t) for i, t in zip(indices, thinks, strict=True))
        runs.append(PoolRun(run_id, "lanes", tuple(timed)))
    return runs, notes + untrue_note(untrue, f"lane records in {folder}")


def _note_reply(
    event: dict[str, object],
    default_run: str,
    answered: dict[str, dict[int, tuple[float | None, float | None]]],
) -> None:
    """Keep when each turn's last answer arrived; a reply that names no turn is not used."""
    run_id, index = event.get("run_id", default_run), event.get("index")
    if isinstance(run_id, str) and isinstance(index, int) and not isinstance(index, bool):
        answered.setdefault(run_id, {})[index] = event_time(event)


def runs_from_transcripts(path: Path) -> tuple[list[PoolRun], list[str]]:
    """Runs from one JSON Lines transcript file (format in the module docstring)."""
    if not path.is_file():
        raise BadInput(f"no such transcript file: {path}")
    runs: list[PoolRun] = []
    without_turns = untrue = 0
    for where, line_number, line in _json_lines(path, tolerate_torn_tail=False, notes=[]):
        record = {"messages": line} if isinstance(line, list) else line
        if not isinstance(record, dict):
            raise BadInput(
                f"{where}: each line must be a JSON object with 'messages', or a messages array"
            )
        run_id = record.get("id", f"{path.name}:{line_number}")
        if not isinstance(run_id, str) or not run_id:
            raise BadInput(f"{where}: 'id' must be a non-empty string")
        timed_messages, tools = _payload(record, where)
        answers = [
            position
            for position, message in enumerate(timed_messages)
            if position > 0 and message["role"] == "assistant"
        ]
        thinks, dropped = transcript_think_times(timed_messages, answers)
        untrue += dropped
        messages = without_timestamps(timed_messages)
        turns = [
            replace(_turn(run_id, index, messages[:position], tools), think_s=think)
            for index, (position, think) in enumerate(zip(answers, thinks, strict=True))
        ]
        if turns:
            runs.append(PoolRun(run_id, "transcript", tuple(turns)))
        else:
            without_turns += 1
    notes: list[str] = []
    if without_turns:
        notes.append(f"{without_turns} transcript(s) in {path} hold no assistant message")
    return runs, notes + untrue_note(untrue, f"transcripts in {path}")


def _turn(
    run_id: str, index: int, messages: list[dict[str, object]], tools: list[dict[str, object]]
) -> Turn:
    return Turn(
        id=f"{run_id}#{index}",
        run_id=run_id,
        index=index,
        messages=messages,
        tools=tools,
        depth_estimate=depth_estimate(messages, tools),
    )


def _payload(data: object, where: str) -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    if not isinstance(data, dict):
        raise BadInput(f"{where}: the turn needs a 'payload' object with 'messages'")
    messages = check_messages(data.get("messages"), where)
    tools = data.get("tools") or []
    if not isinstance(tools, list) or not all(isinstance(tool, dict) for tool in tools):
        raise BadInput(f"{where}: 'tools' must be a list of objects")
    return messages, tools


def _json_lines(
    path: Path, *, tolerate_torn_tail: bool, notes: list[str]
) -> Iterable[tuple[str, int, Any]]:
    try:
        lines = read_regular_text(path, limit=TRANSCRIPT_SIZE_LIMIT).splitlines()
    except (OSError, InputProblem) as exc:
        raise BadInput(f"cannot read {path}: {exc}") from None
    numbered = [(number, line) for number, line in enumerate(lines, 1) if line.strip()]
    for position, (number, line) in enumerate(numbered):
        where = f"{path}:{number}"
        try:
            value = loads_json(line)
        except InputProblem as problem:
            torn = str(problem).startswith("is not valid JSON")
            if tolerate_torn_tail and torn and position == len(numbered) - 1:
                notes.append(f"skipped an unfinished last line at {where}")
                continue
            raise BadInput(f"{where}: {str(problem).removeprefix('is ')}") from None
        yield where, number, value
