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
"reply" events give each turn's think time (`slots.corpus.think_time`); other events are
ignored. A last line that does not parse (a crash mid-write) is skipped and
reported; any other bad line is an error.

From transcripts (`--from-transcripts FILE`, or `--from-chat-logs FILE`): JSON Lines, one
conversation a line, with `messages` (OpenAI chat format), optional `tools` and optional `id`
(default "<file name>:<line>"); a line may also be the bare `messages` array, as chat logs
exported by agent tools often are. Every prefix that ends just before an assistant message is
a turn. Messages may carry a `timestamp`, which gives each turn's think time
(`slots.corpus.think_time`) and is not sent.

`pool_sha256` is the sha256 of one canonical JSON line per turn, runs sorted by id, each line
holding the turn's id, run, index and depth estimate and the sha256 of each message and of the
tool list — the same pool hashes the same wherever it is built.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import field, replace
from pathlib import Path
from typing import Any

from ...errors import BadInput
from ...files import canonical_json
from ...guarded import InputProblem, loads_json, read_regular_text
from ...interfaces.prompt_count import PromptCounter
from ...interfaces.values import frozen_value
from ...lanes.plan import opening_messages
from ...lanes.specs import LaneSpec, load_specs, resolve_files
from ...lanes.tools import (
    READ_FILE,
    TreeTooLarge,
    run_tool,
    tool_call_message,
    tool_definitions,
    tool_result_message,
)
from .fill import fill_deepest_spec_run
from .git_source import Provenance, SpecTree, TreeCache
from .sources.think_time import (
    event_time,
    lane_think_times,
    transcript_think_times,
    without_timestamps,
)
from .turns import (
    PoolRun,
    Turn,
    check_messages,
    depth_estimate,
    estimate_from_chars,
    json_list_chars,
    pool_sha256,
    seeded_rank,
    sha256_text,
)

EVENTS_FILE = "events.jsonl"
# A lane's transcript of a long session is large; anything past this is not one.
TRANSCRIPT_SIZE_LIMIT = 1 << 30


@frozen_value
class Pool:
    """Every turn built, before any window is applied.

    provenances: where spec files came from (commit, or working-tree file hashes);
    sources: where trace and session runs came from (`traces`, `sessions`), for the corpus;
    specs_found / specs_used: specs discovered and kept by --sample-specs (0 without specs);
    notes: what the builder skipped, for the summary (never part of a hash).
    """

    runs: tuple[PoolRun, ...]
    sha256: str
    provenances: tuple[Provenance, ...] = ()
    specs_found: int = 0
    specs_used: int = 0
    notes: tuple[str, ...] = field(default=())
    sources: tuple[dict[str, object], ...] = ()
    # traces' runs, sessions and the like that gave no run: {"run": name, "why": ...}
    left_out: tuple[dict[str, str], ...] = ()

    @property
    def turn_count(self) -> int:
        return sum(len(run.turns) for run in self.runs)


def build_pool(
    *,
    specs: Sequence[Path] = (),
    sample_specs: int | None = None,
    from_lanes: Sequence[Path] = (),
    from_transcripts: Sequence[Path] = (),
    from_traces: Sequence[Path] = (),
    from_sessions: Sequence[Path] = (),
    window: int | None = None,
    fit: str = "scale",
    fill_window: bool = False,
    counter: PromptCounter | None = None,
    seed: int = 0,
    git: str = "git",
    answer_cap: int = 0,
) -> Pool:
    """The pool from any mix of the sources; an empty pool is an error. Traces are fitted
    into `window` (`fit`: "scale" or "drop"), and `fill_window` reads the deepest spec run on
    toward it (`slots.corpus.fill`), so both need it; `counter` counts the filled run's depth
    as the runner does (None: by estimate). Both leave room for answers of `answer_cap` tokens
    (0: none reserved)."""
    if not (specs or from_lanes or from_transcripts or from_traces or from_sessions):
        raise BadInput(
            "give --specs, --from-lanes, --from-transcripts, --from-traces or --from-sessions "
            "(or --demo)"
        )
    runs: list[PoolRun] = []
    notes: list[str] = []
    sources: list[dict[str, object]] = []
    provenances: list[Provenance] = []
    found = used = 0
    if specs:
        all_specs = load_specs(specs)
        chosen = select_specs(all_specs, sample_specs, seed)
        found, used = len(all_specs), len(chosen)
        trees = TreeCache(git)
        spec_runs = runs_from_specs(chosen, trees)
        if fill_window:
            spec_runs, filled = fill_deepest_spec_run(
                chosen, spec_runs, trees, _window(window) - answer_cap, counter
            )
            sources.append(filled)
        runs.extend(spec_runs)
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
    # Traces and session logs are read lazily: most pools come from specs or lanes.
    from .sources.recorded import recorded_runs

    recorded = recorded_runs(
        from_traces, from_sessions, window=window, fit=fit, answer_cap=answer_cap, counter=counter
    )
    runs.extend(recorded.runs)
    notes.extend(recorded.notes)
    sources.extend(recorded.sources)
    pool = make_pool(runs, provenances, notes, specs_found=found, specs_used=used, sources=sources)
    return replace(pool, left_out=tuple(recorded.left_out))


def make_pool(
    runs: Iterable[PoolRun],
    provenances: Iterable[Provenance] = (),
    notes: Iterable[str] = (),
    *,
    specs_found: int = 0,
    specs_used: int = 0,
    sources: Iterable[dict[str, object]] = (),
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
        sources=tuple(sources),
    )


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
    try:
        listing = tree.list_files()
    except TreeTooLarge as exc:
        raise BadInput(f"{spec.where}: repository {exc}") from None
    files = resolve_files(spec, listing)
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
    for run_id, turns in collected.items():
        indices = sorted(turns)
        thinks = lane_think_times(sent.get(run_id, {}), answered.get(run_id, {}), indices)
        timed = (replace(turns[i], think_s=t) for i, t in zip(indices, thinks, strict=True))
        runs.append(PoolRun(run_id, "lanes", tuple(timed)))
    return runs, notes


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
        timed_messages, tools = _payload(record, where)
        answers = [
            position
            for position, message in enumerate(timed_messages)
            if position > 0 and message["role"] == "assistant"
        ]
        thinks = transcript_think_times(timed_messages, answers)
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
    return runs, notes


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


def _window(window: int | None) -> int:
    if window is None:
        raise BadInput("filling the window needs one: give --window")
    return window
