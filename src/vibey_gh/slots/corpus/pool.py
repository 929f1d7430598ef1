"""The pool: every turn built from lane specs, lane records, transcripts, traces or sessions.

From specs: turn 0 is the system prompt and the plan (`lanes.plan`); then, for each of the
spec's files in order, the assistant's `read_file` call with its real arguments and the tool's
result — the file at the commit, cut as the lanes cut it (`lanes.tools`) — and the next turn
is the whole list so far.

Lane records and transcripts are read in `sources.lane_records` (their formats are there).

`pool_sha256` is the sha256 of one canonical JSON line per turn, runs sorted by id, each line
holding the turn's id, run, index and depth estimate and the sha256 of each message and of the
tool list — the same pool hashes the same wherever it is built.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import msgspec
from msgspec import field
from msgspec.structs import replace

from ...errors import BadInput
from ...files import canonical_json
from ...interfaces.prompt_count import PromptCounter
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
from .sources.lane_records import (
    check_input_size,
    events_files,
    runs_from_lanes,
    runs_from_transcripts,
)
from .sources.recorded import recorded_runs
from .turns import (
    PoolRun,
    Turn,
    estimate_from_chars,
    json_list_chars,
    pool_sha256,
    seeded_rank,
    sha256_text,
)


class Pool(msgspec.Struct, frozen=True):
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


@dataclass(frozen=True, kw_only=True)
class PoolSources:
    """What a pool is built of and how: the sources (`specs`, a seeded sample of
    `sample_specs` of them, lane records, transcripts, traces, sessions), how traces are
    fitted into the window (`fit`: "scale" or "drop") and whether the deepest spec run is read
    on toward it (`fill_window`). `slots corpus`'s options are one (`asked.CorpusOptions`)."""

    specs: Sequence[Path] = ()
    sample_specs: int | None = None
    from_lanes: Sequence[Path] = ()
    from_transcripts: Sequence[Path] = ()
    from_traces: Sequence[Path] = ()
    from_sessions: Sequence[Path] = ()
    fit: str = "scale"
    fill_window: bool = False
    seed: int = 0

    @property
    def recorded(self) -> bool:
        """Sources of recorded work (as opposed to specs and the demo)."""
        return bool(self.from_lanes or self.from_transcripts or self.from_traces
                    or self.from_sessions)  # fmt: skip


def build_pool(
    asked: PoolSources,
    *,
    window: int | None = None,
    counter: PromptCounter | None = None,
    git: str = "git",
    answer_cap: int = 0,
    size_cap: int | None = None,
) -> Pool:
    """The pool from any mix of the sources `asked` names; an empty pool is an error. Traces
    are fitted into `window`, and a filled spec run is read on toward it (`slots.corpus.fill`),
    so both need it; `counter` counts the filled run's depth as the runner does (None: by
    estimate). Both leave room for answers of `answer_cap` tokens (0: none reserved).
    `size_cap`: the characters a corpus of whole runs may hold; a lane set, transcript, trace
    or session whose runs would pass it is refused before it is built (None: unchecked, as for
    segments, which take a few turns of each)."""
    if not (asked.specs or asked.recorded):
        raise BadInput(
            "give --specs, --from-lanes, --from-transcripts, --from-traces or --from-sessions "
            "(or --demo)"
        )
    runs: list[PoolRun] = []
    notes: list[str] = []
    sources: list[dict[str, object]] = []
    provenances: list[Provenance] = []
    found = used = 0
    if asked.specs:
        all_specs = load_specs(asked.specs)
        chosen = select_specs(all_specs, asked.sample_specs, asked.seed)
        found, used = len(all_specs), len(chosen)
        trees = TreeCache(git)
        spec_runs = runs_from_specs(chosen, trees)
        if asked.fill_window:
            spec_runs, filled = fill_deepest_spec_run(
                chosen, spec_runs, trees, _window(window) - answer_cap, counter
            )
            sources.append(filled)
        runs.extend(spec_runs)
        provenances = trees.provenances()
        if used < found:
            notes.append(f"sampled {used} of {found} specs with seed {asked.seed}")
    elif asked.sample_specs is not None:
        raise BadInput("--sample-specs needs --specs")
    for folder in asked.from_lanes:
        check_input_size(events_files(folder), folder, size_cap)
        lane_runs, lane_notes = runs_from_lanes(folder)
        runs.extend(lane_runs)
        notes.extend(lane_notes)
    for path in asked.from_transcripts:
        check_input_size([path] if path.is_file() else [], path, size_cap)
        transcript_runs, transcript_notes = runs_from_transcripts(path)
        runs.extend(transcript_runs)
        notes.extend(transcript_notes)
    recorded = recorded_runs(
        asked.from_traces,
        asked.from_sessions,
        window=window,
        fit=asked.fit,
        answer_cap=answer_cap,
        counter=counter,
        size_cap=size_cap,
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


def _window(window: int | None) -> int:
    if window is None:
        raise BadInput("filling the window needs one: give --window")
    return window
