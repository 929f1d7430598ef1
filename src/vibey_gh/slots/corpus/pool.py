"""The pool: every turn built from lane specs, lane records or transcripts.

From specs: turn 0 is the system prompt and the plan (`lanes.plan`); then, for each of the
spec's files in order, the assistant's `read_file` call with its real arguments and the tool's
result — the file at the commit, cut as the lanes cut it (`lanes.tools`) — and the next turn
is the whole list so far.

From lane records (`--from-lanes DIR`): every `events.jsonl` under DIR, one JSON object a
line. Lines whose "event" is "turn" are requests as the lane sent them::

    {"event": "turn", "run_id": "state-layout-1", "index": 0,
     "payload": {"messages": [...], "tools": [...]}}

`run_id` defaults to the events file's folder (relative to DIR) and `index` to the order of the
run's turn events; a second event with the same run and index (a retry) is counted and skipped.
Other events are ignored. A last line that does not parse (a crash mid-write) is skipped and
reported; any other bad line is an error.

From transcripts (`--from-transcripts FILE`, or `--from-chat-logs FILE`): JSON Lines, one
conversation a line, with `messages` (OpenAI chat format), optional `tools` and optional `id`
(default "<file name>:<line>"); a line may also be the bare `messages` array, as chat logs
exported by agent tools often are. Every prefix that ends just before an assistant message is
a turn.

`pool_sha256` is the sha256 of one canonical JSON line per turn, runs sorted by id, each line
holding the turn's id, run, index and depth estimate and the sha256 of each message and of the
tool list — the same pool hashes the same wherever it is built.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...errors import BadInput
from ...files import canonical_json, utf8
from ...guarded import InputProblem, loads_json, read_regular_text
from ...lanes.plan import opening_messages
from ...lanes.specs import LaneSpec, load_specs, resolve_files
from ...lanes.tools import (
    READ_FILE,
    run_tool,
    tool_call_message,
    tool_definitions,
    tool_result_message,
)
from .git_source import Provenance, SpecTree, TreeCache
from .turns import (
    Turn,
    check_messages,
    depth_estimate,
    estimate_from_chars,
    json_list_chars,
    seeded_rank,
    sha256_text,
)

EVENTS_FILE = "events.jsonl"
# A lane's transcript of a long session is large; anything past this is not one.
TRANSCRIPT_SIZE_LIMIT = 1 << 30


@dataclass(frozen=True)
class PoolRun:
    """One run's turns in order. `source` is "spec", "lanes" or "transcript"."""

    run_id: str
    source: str
    turns: tuple[Turn, ...]


@dataclass(frozen=True)
class Pool:
    """Every turn built, before any window is applied.

    provenances: where spec files came from (commit, or working-tree file hashes);
    specs_found / specs_used: specs discovered and kept by --sample-specs (0 without specs);
    notes: what the builder skipped, for the summary (never part of a hash).
    """

    runs: tuple[PoolRun, ...]
    sha256: str
    provenances: tuple[Provenance, ...] = ()
    specs_found: int = 0
    specs_used: int = 0
    notes: tuple[str, ...] = field(default=())

    @property
    def turn_count(self) -> int:
        return sum(len(run.turns) for run in self.runs)


def build_pool(
    *,
    specs: Sequence[Path] = (),
    sample_specs: int | None = None,
    from_lanes: Sequence[Path] = (),
    from_transcripts: Sequence[Path] = (),
    seed: int = 0,
    git: str = "git",
) -> Pool:
    """The pool from any mix of the three sources; an empty pool is an error."""
    if not (specs or from_lanes or from_transcripts):
        raise BadInput("give --specs, --from-lanes or --from-transcripts (or --demo)")
    runs: list[PoolRun] = []
    notes: list[str] = []
    provenances: list[Provenance] = []
    found = used = 0
    if specs:
        all_specs = load_specs(specs)
        chosen = select_specs(all_specs, sample_specs, seed)
        found, used = len(all_specs), len(chosen)
        trees = TreeCache(git)
        runs.extend(runs_from_specs(chosen, trees))
        provenances = trees.provenances()
        if used < found:
            notes.append(f"sampled {used} of {found} specs with seed {seed}")
    elif sample_specs is not None:
        raise BadInput("--sample-specs needs --specs")
    for folder in from_lanes:
        lane_runs, lane_notes = runs_from_lanes(folder)
        runs.extend(lane_runs)
        notes.extend(lane_notes)
    for path in from_transcripts:
        transcript_runs, transcript_notes = runs_from_transcripts(path)
        runs.extend(transcript_runs)
        notes.extend(transcript_notes)
    return make_pool(runs, provenances, notes, specs_found=found, specs_used=used)


def make_pool(
    runs: Iterable[PoolRun],
    provenances: Iterable[Provenance] = (),
    notes: Iterable[str] = (),
    *,
    specs_found: int = 0,
    specs_used: int = 0,
) -> Pool:
    """Sort the runs, refuse duplicates and empty pools, and hash."""
    by_id: dict[str, PoolRun] = {}
    for run in runs:
        if run.run_id in by_id:
            raise BadInput(f"run id {run.run_id!r} appears twice in the pool")
        if run.turns:
            by_id[run.run_id] = run
    ordered = tuple(by_id[key] for key in sorted(by_id))
    if not ordered:
        raise BadInput("the pool is empty: no turn could be built from the inputs")
    return Pool(
        runs=ordered,
        sha256=pool_sha256(ordered),
        provenances=tuple(provenances),
        specs_found=specs_found,
        specs_used=specs_used,
        notes=tuple(notes),
    )


def pool_sha256(runs: Sequence[PoolRun]) -> str:
    digests: dict[int, str] = {}

    def digest(item: Any) -> str:
        # Turns of one run share their message objects, so each is serialized once.
        key = id(item)
        if key not in digests:
            digests[key] = sha256_text(canonical_json(item))
        return digests[key]

    total = hashlib.sha256()
    for run in runs:
        for turn in run.turns:
            line = {
                "id": turn.id,
                "run_id": turn.run_id,
                "index": turn.index,
                "depth_estimate": turn.depth_estimate,
                "messages": [digest(message) for message in turn.messages],
                "tools": digest(turn.tools),
            }
            total.update(utf8(canonical_json(line)) + b"\n")
    return total.hexdigest()


def select_specs(specs: Sequence[LaneSpec], sample: int | None, seed: int) -> list[LaneSpec]:
    """All specs, or a seeded sample of `sample` of them (kept in id order)."""
    if sample is None or sample >= len(specs):
        if sample is not None and sample < 1:
            raise BadInput(f"--sample-specs must be at least 1, not {sample}")
        return list(specs)
    if sample < 1:
        raise BadInput(f"--sample-specs must be at least 1, not {sample}")
    ranked = sorted(specs, key=lambda spec: seeded_rank(seed, "spec", spec.id))[:sample]
    return sorted(ranked, key=lambda spec: spec.id)


def runs_from_specs(specs: Sequence[LaneSpec], trees: TreeCache) -> list[PoolRun]:
    return [
        run_from_spec(spec, trees.open(spec.repository, spec.commit, spec.where)) for spec in specs
    ]


def run_from_spec(spec: LaneSpec, tree: SpecTree) -> PoolRun:
    """The turns of one planned lane that reads its files in order."""
    files = resolve_files(spec, tree.list_files())
    tree.prefetch(files)
    tools = tool_definitions()
    tools_chars = len(canonical_json(tools))
    messages = opening_messages(spec)
    message_chars = [len(canonical_json(message)) for message in messages]

    def turn(index: int) -> Turn:
        chars = json_list_chars(message_chars) + tools_chars
        return Turn(
            id=f"{spec.id}#{index}",
            run_id=spec.id,
            index=index,
            messages=list(messages),
            tools=tools,
            depth_estimate=estimate_from_chars(chars),
        )

    turns = [turn(0)]
    for index, path in enumerate(files, start=1):
        call_id = "call_" + sha256_text(f"{spec.id}\0{index}")[:8]
        arguments = {"path": path}
        call = tool_call_message(call_id, READ_FILE, arguments)
        reply = tool_result_message(call_id, READ_FILE, run_tool(READ_FILE, arguments, tree))
        messages.extend((call, reply))
        message_chars.extend((len(canonical_json(call)), len(canonical_json(reply))))
        turns.append(turn(index))
    return PoolRun(spec.id, "spec", tuple(turns))


def runs_from_lanes(folder: Path) -> tuple[list[PoolRun], list[str]]:
    """Runs from every `events.jsonl` under `folder` (format in the module docstring)."""
    if not folder.is_dir():
        raise BadInput(f"no such lanes folder: {folder}")
    files = sorted(folder.rglob(EVENTS_FILE))
    if not files:
        raise BadInput(f"no {EVENTS_FILE} file under {folder}")
    collected: dict[str, dict[int, Turn]] = {}
    notes: list[str] = []
    duplicates = 0
    for file in files:
        default_run = file.parent.relative_to(folder).as_posix()
        if default_run == ".":
            default_run = folder.name
        counters: dict[str, int] = {}
        for where, _, event in _json_lines(file, tolerate_torn_tail=True, notes=notes):
            if not isinstance(event, dict) or event.get("event") != "turn":
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
    if duplicates:
        notes.append(f"skipped {duplicates} repeated turn event(s) (retries) in {folder}")
    runs = [
        PoolRun(run_id, "lanes", tuple(turns[i] for i in sorted(turns)))
        for run_id, turns in collected.items()
    ]
    return runs, notes


def runs_from_transcripts(path: Path) -> tuple[list[PoolRun], list[str]]:
    """Runs from one JSON Lines transcript file (format in the module docstring)."""
    if not path.is_file():
        raise BadInput(f"no such transcript file: {path}")
    runs: list[PoolRun] = []
    without_turns = 0
    for where, line_number, line in _json_lines(path, tolerate_torn_tail=False, notes=[]):
        record = {"messages": line} if isinstance(line, list) else line
        if not isinstance(record, dict):
            raise BadInput(
                f"{where}: each line must be a JSON object with 'messages', or a messages array"
            )
        run_id = record.get("id", f"{path.name}:{line_number}")
        if not isinstance(run_id, str) or not run_id:
            raise BadInput(f"{where}: 'id' must be a non-empty string")
        messages, tools = _payload(record, where)
        answers = [
            position
            for position, message in enumerate(messages)
            if position > 0 and message["role"] == "assistant"
        ]
        turns = [
            _turn(run_id, index, messages[:position], tools)
            for index, position in enumerate(answers)
        ]
        if turns:
            runs.append(PoolRun(run_id, "transcript", tuple(turns)))
        else:
            without_turns += 1
    notes: list[str] = []
    if without_turns:
        notes.append(f"{without_turns} transcript(s) in {path} hold no assistant message")
    return runs, notes


def _turn(
    run_id: str, index: int, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
) -> Turn:
    return Turn(
        id=f"{run_id}#{index}",
        run_id=run_id,
        index=index,
        messages=messages,
        tools=tools,
        depth_estimate=depth_estimate(messages, tools),
    )


def _payload(data: Any, where: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
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
