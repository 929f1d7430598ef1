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
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import msgspec
from msgspec.structs import replace

from ...errors import BadInput, MalformedJson
from ...files import atomic_write_text, canonical_json
from ...guarded import DEFAULT_LIMIT, InputProblem, loads_json, read_regular_text
from ...interfaces import json_fields
from ...interfaces.prompt_count import PromptCounter
from .draw import STRATA, draw_runs, draw_segments
from .pool import Pool, build_pool
from .turns import Segment, Stratum, Turn, sha256_text

T = TypeVar("T")

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
    "write_corpus",
]

SCHEMA_VERSION = 1
CORPUS_SIZE_LIMIT = DEFAULT_LIMIT
KIND = "vibey-gh slots corpus"
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


class Corpus(msgspec.Struct, frozen=True):
    """A drawn corpus. `segments` are in replay order; `strata` shallow to deep; `commits`
    where spec files came from; `dropped_over_window` pool turns deeper than the window."""

    corpus_sha256: str
    pool_sha256: str
    window: int
    seed: int
    segment_turns: int
    segments_per_stratum: int
    segments: tuple[Segment, ...]
    strata: tuple[Stratum, ...]
    commits: tuple[dict[str, object], ...]
    pool_runs: int
    pool_turns: int
    dropped_over_window: int
    specs_found: int = 0
    specs_used: int = 0
    sources: tuple[dict[str, object], ...] = ()
    shape: str = SHAPE_SEGMENTS
    # the answer cap every turn leaves room for (None: a corpus drawn before the rule)
    answer_cap: int | None = None
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
        shape = {"shape": self.shape} if self.whole_runs else {}
        return {
            **shape,
            "schema_version": SCHEMA_VERSION,
            "kind": KIND,
            "pool_sha256": self.pool_sha256,
            "pool": {
                "runs": self.pool_runs,
                "turns": self.pool_turns,
                "dropped_over_window": self.dropped_over_window,
                "specs_found": self.specs_found,
                "specs_used": self.specs_used,
            },
            "window": self.window,
            "seed": self.seed,
            "segment_turns": self.segment_turns,
            "segments_per_stratum": self.segments_per_stratum,
            "commits": list(self.commits),
            "strata": [stratum.to_json() for stratum in self.strata],
            "segments": [segment.to_json() for segment in self.segments],
            # Left out when empty, so a corpus without traces or sessions keeps its bytes.
            **({"sources": list(self.sources)} if self.sources else {}),
            **({"answer_cap": self.answer_cap} if self.answer_cap is not None else {}),
            **({"left_out": list(self.left_out)} if self.left_out else {}),
        }

    def to_json(self) -> dict[str, object]:
        return {**self.body_json(), "corpus_sha256": self.corpus_sha256}

    @classmethod
    def from_json(cls, data: object, where: str = "corpus") -> Corpus:
        """Validate the schema and the hash; BadInput naming what is wrong."""
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
        shape = data.get("shape", SHAPE_SEGMENTS)
        if shape not in SHAPES:
            raise BadInput(f"{where}: corpus shape {shape!r} (expected runs or segments)")
        try:
            pool = json_fields.mapping(data, "pool", json_fields.REQUIRED)
            corpus = cls(
                corpus_sha256=actual,
                pool_sha256=_typed(data, "pool_sha256", str),
                window=_typed(data, "window", int),
                seed=_typed(data, "seed", int),
                segment_turns=_typed(data, "segment_turns", int),
                segments_per_stratum=_typed(data, "segments_per_stratum", int),
                segments=tuple(_each(data, "segments", Segment.from_json, where)),
                strata=tuple(_each(data, "strata", Stratum.from_json, where)),
                commits=tuple(_typed(data, "commits", list)),
                pool_runs=_typed(pool, "runs", int, "pool"),
                pool_turns=_typed(pool, "turns", int, "pool"),
                dropped_over_window=_typed(pool, "dropped_over_window", int, "pool"),
                specs_found=_typed(pool, "specs_found", int, "pool"),
                specs_used=_typed(pool, "specs_used", int, "pool"),
                sources=tuple(json_fields.each(data, "sources", _source)),
                shape=shape,
                answer_cap=_answer_cap(data),
                left_out=tuple(json_fields.each(data, "left_out", _left_out)),
            )
        except MalformedJson as exc:
            raise BadInput(f"{where}: malformed corpus ({exc})") from None
        except (KeyError, TypeError) as exc:
            raise BadInput(f"{where}: malformed corpus ({type(exc).__name__}: {exc})") from None
        if len(corpus.strata) != STRATA or not corpus.segments:
            raise BadInput(f"{where}: malformed corpus (needs {STRATA} strata and a segment)")
        return corpus


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
        corpus_sha256="",
        pool_sha256=pool.sha256,
        window=window,
        seed=seed,
        segment_turns=segment_turns,
        segments_per_stratum=segments_per_stratum,
        segments=tuple(_detached(segment) for segment in drawn.segments),
        strata=drawn.strata,
        commits=tuple(provenance.to_json() for provenance in pool.provenances),
        pool_runs=len(pool.runs),
        pool_turns=pool.turn_count,
        dropped_over_window=drawn.dropped_over_window,
        specs_found=pool.specs_found,
        specs_used=pool.specs_used,
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
        specs=[demo_specs_dir()],
        seed=seed,
        window=window,
        fill_window=fill_window,
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
    text = canonical_json(corpus.to_json()) + "\n"
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
    return Corpus.from_json(data, f"corpus file {path}")


def _source(item: object) -> dict[str, object]:
    """One entry of `sources`: where trace or session runs came from (an object)."""
    if not isinstance(item, dict) or not isinstance(item.get("source"), str):
        raise MalformedJson("expected an object with a 'source' string")
    return item


def _answer_cap(data: dict[str, object]) -> int | None:
    value: int | None = json_fields.integer(data, "answer_cap", None)
    if value is not None and value < 1:
        raise MalformedJson("expected a whole number of tokens >= 1", ("answer_cap",))
    return value


def _left_out(item: object) -> dict[str, str]:
    """One entry of `left_out`: a run or source that gave no run, and why."""
    if not isinstance(item, dict) or not all(
        isinstance(item.get(key), str) for key in ("run", "why")
    ):
        raise MalformedJson("expected an object with 'run' and 'why' strings")
    return item


def _detached(segment: Segment) -> Segment:
    """The segment with its own copies of every message: pool turns share message objects,
    and whoever sends a corpus turn must not be able to change its neighbours."""
    turns = tuple(
        replace(turn, messages=copy.deepcopy(turn.messages), tools=copy.deepcopy(turn.tools))
        for turn in segment.turns
    )
    return replace(segment, turns=turns)


def _typed(data: object, key: str, kind: type, *outer: str) -> Any:
    with json_fields.within(*outer):
        return json_fields.typed(data, key, kind)


def _each(data: object, key: str, parse: Callable[[Any, str], T], where: str) -> list[T]:
    """Every segment or stratum; one that is not an object is named by its JSON path."""
    return json_fields.each(data, key, lambda item: parse(item, where), json_fields.REQUIRED)
