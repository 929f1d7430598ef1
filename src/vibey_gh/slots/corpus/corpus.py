"""The corpus a calibration replays: segments or whole runs drawn from a storm-shaped pool.

How the pool is built is in `slots.corpus.pool`, how segments are drawn in `slots.corpus.draw`.
A corpus file is one line of canonical JSON (sorted keys, no spaces)::

    {"schema_version": 1, "kind": "vibey-gh slots corpus",
     "corpus_sha256": "...",        # sha256 of the canonical JSON of everything else here
     "pool_sha256": "...", "pool": {"runs": 40, "turns": 1096, "dropped_over_window": 3,
                                    "specs_found": 120, "specs_used": 40},
     "window": 65536, "seed": 0, "segment_turns": 3, "segments_per_stratum": 5,
     "commits": [{"repository": "...", "commit": "<sha>", "source": "git"} or
                 {"repository": "...", "commit": null, "source": "working-tree",
                  "files": {"<path>": "<sha256>"}}],
     "strata": [{"name": "<16k", "low": 0, "high": 16384, "segments": 5, "wanted": 5,
                 "available": 212}, ...],          # shallow to deep
     "sources": [{"source": "trace", "id": "...", "fit": "scale", "runs": [...]},
                 {"source": "session", "agent": "codex", "id": "...", "started": "..."}],
                                   # only when the pool holds traces or sessions
     "segments": [{"id": "<run>#<first>-<last>", "run_id": "...", "stratum": 0,
                   "turns": [{"id": "<run>#<index>", "run_id": "...", "index": 0,
                              "depth_estimate": 812, "messages": [...], "tools": [...]}]}]}

A corpus drawn with room for answers holds ``"answer_cap"``: every turn's prompt plus
its answer cap (the turn's own ``max_tokens`` where lower) fits the window (the headroom rule,
docs/decision.md), and a calibration's output cap defaults to it. Runs and sources that gave
no run are named in ``"left_out"`` (``[{"run": ..., "why": ...}]``). Both are left out when
absent, so older corpora keep their bytes.

A corpus of whole runs (shape "runs") also holds ``"shape": "runs"``; each of its segments
is one run, every turn of it that fits the window, and `segment_turns` is 0. A file without
`shape` holds segments (the method it was written with before runs existed), so the
segment corpora written before keep their bytes and their sha256.

The same inputs give a byte-identical file. Reading one checks its schema and recomputes its
hash: a file edited by hand is refused, never replayed.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Final, Literal

import msgspec
from msgspec import Meta
from msgspec.structs import replace

from ...errors import BadInput, MalformedJson
from ...files import atomic_write_text, canonical_json
from ...guarded import DEFAULT_LIMIT, InputProblem, loads_json, read_regular_text
from ...interfaces.prompt_count import PromptCounter
from ...interfaces.schema import as_json, checked
from .draw import STRATA, draw_runs, draw_segments
from .pool import Pool, PoolSources, build_pool
from .turns import Segment, Stratum, Turn, check_messages, sha256_text

__all__ = [
    "SHAPES",
    "Corpus",
    "Segment",
    "Stratum",
    "Turn",
    "build_corpus",
    "build_demo_corpus",
    "demo_specs_dir",
    "load_corpus",
    "read_corpus",
    "write_corpus",
]

SCHEMA_VERSION: Final = 1
CORPUS_SIZE_LIMIT = DEFAULT_LIMIT
KIND: Final = "vibey-gh slots corpus"
# "segments": k consecutive turns a unit (the decision record's method); "runs": whole runs.
SHAPE_RUNS = "runs"
SHAPE_SEGMENTS = "segments"
SHAPES = (SHAPE_RUNS, SHAPE_SEGMENTS)
DEFAULT_SEGMENTS_PER_STRATUM = 5
DEFAULT_SEGMENT_TURNS = 3
# Small enough that the 135M model replays a demo step in a couple of minutes on 2 cores.
DEMO_WINDOW = 4096
DEMO_SEGMENTS_PER_STRATUM = 2
DEMO_SEGMENT_TURNS = 2
# The demo's output cap (`calibrate --demo`): its turns leave room for answers this long.
DEMO_ANSWER_CAP = 128


class PoolCounts(msgspec.Struct, frozen=True):
    """What the pool a corpus was drawn from held: its runs and turns, the turns deeper than
    the window (`dropped_over_window`), and the spec files found and used."""

    runs: int
    turns: int
    dropped_over_window: int
    specs_found: int = 0
    specs_used: int = 0


class Corpus(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """A drawn corpus, declared as its file holds it (the module's docstring shows one).
    `segments` are in replay order; `strata` shallow to deep; `commits` where spec files came
    from. A field at its default is left out of the file (`shape` for segments, `sources`,
    `answer_cap` and `left_out` when there are none), so older corpora keep their bytes and
    their sha256; the schema version and kind have no default, so they are always written."""

    schema_version: Literal[1]
    kind: Literal["vibey-gh slots corpus"]
    # "" until hashed: the hash is taken over everything else (`body_json`)
    corpus_sha256: str = ""
    pool_sha256: str
    pool: PoolCounts
    window: int
    seed: int
    segment_turns: int
    segments_per_stratum: int
    commits: tuple[dict[str, object], ...]
    strata: Annotated[tuple[Stratum, ...], Meta(min_length=STRATA, max_length=STRATA)]
    segments: Annotated[tuple[Segment, ...], Meta(min_length=1)]
    # where trace or session runs came from (each names its "source"), when the pool held any
    sources: tuple[dict[str, object], ...] = ()
    shape: Annotated[str, Meta(pattern="^(runs|segments)$")] = SHAPE_SEGMENTS
    # the answer cap every turn leaves room for (None: a corpus drawn before the rule)
    answer_cap: Annotated[int, Meta(ge=1)] | None = None
    # runs and sources that gave no run: {"run": …, "why": …}
    left_out: tuple[dict[str, str], ...] = ()

    @property
    def whole_runs(self) -> bool:
        return self.shape == SHAPE_RUNS

    @property
    def turn_count(self) -> int:
        return sum(len(segment.turns) for segment in self.segments)

    @property
    def max_depth_estimate(self) -> int:
        return max((turn.depth_estimate for turn in self.turns()), default=0)

    def turns(self) -> Iterator[Turn]:
        for segment in self.segments:
            yield from segment.turns

    def body_json(self) -> dict[str, object]:
        """Everything but the hash: what `corpus_sha256` is computed over."""
        return {k: v for k, v in as_json(self).items() if k != "corpus_sha256"}


def read_corpus(data: object, where: str = "corpus") -> Corpus:
    """A corpus file's content as a Corpus, its schema and hash checked; BadInput naming
    what is wrong (a bad field by its JSON path)."""
    if not isinstance(data, dict):
        raise BadInput(f"{where}: not a corpus (expected a JSON object)")
    if data.get("kind") != KIND:
        raise BadInput(f"{where}: not a corpus file (kind {data.get('kind')!r})")
    if data.get("schema_version") != SCHEMA_VERSION:
        raise BadInput(
            f"{where}: corpus schema_version {data.get('schema_version')!r}; "
            f"this tool reads {SCHEMA_VERSION}"
        )
    body = {key: value for key, value in data.items() if key != "corpus_sha256"}
    recorded = data.get("corpus_sha256")
    actual = sha256_text(canonical_json(body))
    if recorded != actual:
        raise BadInput(
            f"{where}: content does not match its corpus_sha256 "
            f"(recorded {str(recorded)[:16]}, content hashes to {actual[:16]})"
        )
    try:
        corpus = checked(data, Corpus)
        _check_entries(corpus, where)
    except MalformedJson as exc:
        raise BadInput(f"{where}: malformed corpus ({exc})") from None
    return corpus


def _check_entries(corpus: Corpus, where: str) -> None:
    """What the declaration leaves open: each message's role, and the keys every source and
    every left-out run names."""
    for turn in corpus.turns():
        check_messages(turn.messages, f"{where}: turn {turn.id}")
    for index, source in enumerate(corpus.sources):
        if not isinstance(source.get("source"), str):
            raise MalformedJson("expected an object with a 'source' string", ("sources", index))
    for index, left in enumerate(corpus.left_out):
        if not all(key in left for key in ("run", "why")):
            raise MalformedJson(
                "expected an object with 'run' and 'why' strings", ("left_out", index)
            )


def build_corpus(
    pool: Pool,
    *,
    window: int,
    segments_per_stratum: int = DEFAULT_SEGMENTS_PER_STRATUM,
    segment_turns: int = DEFAULT_SEGMENT_TURNS,
    seed: int = 0,
    shape: str = SHAPE_SEGMENTS,
    answer_cap: int | None = None,
) -> Corpus:
    """Draw from `pool` (see `slots.corpus.draw`) and hash the result. For whole runs
    `segments_per_stratum` counts runs and `segment_turns` is not used (recorded as 0).
    `answer_cap`: the output cap every drawn turn leaves room for in the window (None: none
    reserved, and none recorded)."""
    if answer_cap is not None:
        check_answer_cap(answer_cap, window)
    room = answer_cap or 0
    if shape not in SHAPES:
        raise BadInput(f"--shape must be runs or segments, not {shape!r}")
    # Filled pools (read-on specs, traces scaled to the window) replay their deepest turn.
    filled = any(
        source.get("source") == "fill" or source.get("fit") == "scale" for source in pool.sources
    )
    if shape == SHAPE_RUNS:
        drawn = draw_runs(
            pool,
            window=window,
            runs_per_stratum=segments_per_stratum,
            seed=seed,
            deepest_first=filled,
            answer_cap=room,
        )
        segment_turns = 0
    else:
        drawn = draw_segments(
            pool,
            window=window,
            segments_per_stratum=segments_per_stratum,
            segment_turns=segment_turns,
            seed=seed,
            deepest_first=filled,
            answer_cap=room,
        )
    unhashed = Corpus(
        schema_version=SCHEMA_VERSION,
        kind=KIND,
        pool_sha256=pool.sha256,
        window=window,
        seed=seed,
        segment_turns=segment_turns,
        segments_per_stratum=segments_per_stratum,
        segments=tuple(_detached(segment) for segment in drawn.segments),
        strata=drawn.strata,
        commits=tuple(provenance.to_json() for provenance in pool.provenances),
        pool=PoolCounts(
            runs=len(pool.runs),
            turns=pool.turn_count,
            dropped_over_window=drawn.dropped_over_window,
            specs_found=pool.specs_found,
            specs_used=pool.specs_used,
        ),
        sources=pool.sources,
        shape=shape,
        answer_cap=answer_cap,
        left_out=(*pool.left_out, *drawn.left_out),
    )
    digest = sha256_text(canonical_json(unhashed.body_json()))
    return replace(unhashed, corpus_sha256=digest)


def check_answer_cap(answer_cap: int, window: int) -> None:
    """An answer cap leaves room for a prompt in the window, or no turn could ever fit."""
    if not 1 <= answer_cap < window:
        raise BadInput(
            f"--max-tokens must be at least 1 and below the window ({window:,}), not {answer_cap:,}"
        )


def demo_specs_dir() -> Path:
    """The lane specs shipped with the package, over the package's own source files."""
    return Path(__file__).resolve().parents[2] / "demo" / "specs"


def build_demo_corpus(
    window: int = DEMO_WINDOW,
    segments_per_stratum: int = DEMO_SEGMENTS_PER_STRATUM,
    segment_turns: int = DEMO_SEGMENT_TURNS,
    seed: int = 0,
    shape: str = SHAPE_SEGMENTS,
    fill_window: bool = False,
    counter: PromptCounter | None = None,
    answer_cap: int = DEMO_ANSWER_CAP,
) -> Corpus:
    """The embedded demo's corpus: the shipped specs over the installed package's files (at
    HEAD when the package sits in a git checkout that tracks it, else from disk)."""
    check_answer_cap(answer_cap, window)
    pool = build_pool(
        PoolSources(specs=[demo_specs_dir()], seed=seed, fill_window=fill_window),
        window=window,
        counter=counter,
        answer_cap=answer_cap,
    )
    return build_corpus(
        pool,
        window=window,
        segments_per_stratum=segments_per_stratum,
        segment_turns=segment_turns,
        seed=seed,
        shape=shape,
        answer_cap=answer_cap,
    )


def write_corpus(corpus: Corpus, path: Path) -> None:
    """Write atomically, as one canonical JSON line (byte-identical for identical corpora)."""
    if path.is_dir():
        raise BadInput(f"--out {path} is a folder; give a file name")
    text = canonical_json(as_json(corpus)) + "\n"
    if len(text) > CORPUS_SIZE_LIMIT:
        # A file past the reader's limit could never be replayed: say so now, write nothing.
        raise BadInput(
            f"the corpus would be {len(text) >> 20} MiB, more than the "
            f"{CORPUS_SIZE_LIMIT >> 20} MiB a corpus file may hold: draw fewer runs "
            "(--segments-per-stratum) or segments (--shape segments)"
        )
    atomic_write_text(path, text)


def load_corpus(path: Path) -> Corpus:
    """Read, validate and hash-check a corpus file."""
    try:
        data = loads_json(read_regular_text(path, limit=CORPUS_SIZE_LIMIT))
    except FileNotFoundError:
        raise BadInput(
            f"corpus file not found: {path} (build one with `vibey-gh slots corpus`, or "
            "measure on the shipped demo corpus with `vibey-gh slots calibrate --demo`)"
        ) from None
    except InputProblem as problem:
        raise BadInput(f"corpus file {path} {problem}") from None
    return read_corpus(data, f"corpus file {path}")


def _detached(segment: Segment) -> Segment:
    """The segment with its own copies of every message: pool turns share message objects,
    and whoever sends a corpus turn must not be able to change its neighbours."""
    turns = tuple(
        replace(turn, messages=copy.deepcopy(turn.messages), tools=copy.deepcopy(turn.tools))
        for turn in segment.turns
    )
    return replace(segment, turns=turns)
