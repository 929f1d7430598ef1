"""What `slots corpus` is asked to build, checked once, and the corpus it builds.

The command line builds one `CorpusOptions` of its flags; building it refuses what cannot be
built (no input, no --out, options for another shape or another count) before anything is
read. `draw_asked` draws the corpus from it, with the config's window and output cap where the
options name none (the caller reads the config: this package does not).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ...errors import BadInput
from ...interfaces.prompt_count import PromptCounter
from .corpus import (
    CORPUS_SIZE_LIMIT,
    DEFAULT_SEGMENT_TURNS,
    DEFAULT_SEGMENTS_PER_STRATUM,
    DEMO_ANSWER_CAP,
    DEMO_SEGMENT_TURNS,
    DEMO_SEGMENTS_PER_STRATUM,
    DEMO_WINDOW,
    SHAPE_RUNS,
    SHAPE_SEGMENTS,
    Corpus,
    build_corpus,
    build_demo_corpus,
    check_answer_cap,
)
from .pool import PoolSources, build_pool

# what a corpus is built of (`CorpusOptions`' fields): one at least
INPUTS = ("specs", "from_lanes", "from_transcripts", "from_traces", "from_sessions", "demo")


@dataclass(frozen=True)
class CorpusOptions(PoolSources):
    """The inputs of a corpus (`PoolSources`; `from_transcripts` holds the chat logs too, and
    `demo` the shipped specs) and how to draw it. None: the default (the config's window and
    output cap, the shape by the inputs, the demo's or the usual counts)."""

    out: Path
    count_with: str | None = None
    demo: bool = False
    window: int | None = None
    shape: str | None = None
    segments_per_stratum: int | None = None
    segment_turns: int | None = None
    max_tokens: int | None = None

    def __post_init__(self) -> None:
        if self.demo and (self.recorded or self.specs or self.sample_specs is not None):
            raise BadInput("--demo uses the shipped specs; give no other inputs")
        if self.drawn_shape == SHAPE_RUNS and self.segment_turns is not None:
            raise BadInput("--segment-turns is for --shape segments; a whole run keeps every turn")
        if self.count_with is not None and not (self.fill_window or self.from_sessions):
            raise BadInput(
                "--count-with is for --fill-window and --from-sessions: nothing else is counted"
            )

    @property
    def drawn_shape(self) -> str:
        """Recorded work replays whole, with its own tool time; specs and the demo have no
        timing and keep the decision record's segment method (see docs/decision.md)."""
        return self.shape or (SHAPE_RUNS if self.recorded else SHAPE_SEGMENTS)

    @property
    def counting(self) -> bool:
        """Whether a runner counts depth: spec runs filled by reading on, and sessions'
        stand-ins when asked; nothing else needs the runner."""
        filling = self.fill_window and (self.count_with or "runner") == "runner"
        return (filling and bool(self.specs or self.demo)) or (
            bool(self.from_sessions) and self.count_with == "runner"
        )


def options_asked(show: Path | None, flags: dict[str, Any]) -> CorpusOptions | Path:
    """The corpus `flags` ask to build (`CorpusOptions`' fields), or the corpus file to `show`.
    Refuses (BadInput) a --show with inputs or --out, no input at all, no --out, and an --out
    the system owns (the caller checks that), before anything is read."""
    building = any(flags[name] for name in INPUTS)
    if show is not None:
        if building or flags["out"] is not None:
            raise BadInput("--show reads a corpus; it takes no inputs and no --out")
        return show
    if not building:
        raise BadInput(
            "nothing to do: give --specs, --from-lanes (--from-my-lanes), --from-transcripts, "
            "--from-traces, --from-sessions or --demo "
            "with --out FILE, or --show FILE"
        )
    if flags["out"] is None:
        raise BadInput("--out FILE is required to write the corpus")
    return CorpusOptions(**flags)


class ConfigDefaults(Protocol):
    """What a corpus takes of the config where the options name neither (the config's
    `LocalModels` is one)."""

    @property
    def window(self) -> int: ...
    @property
    def max_tokens(self) -> int: ...


def draw_asked(
    options: CorpusOptions,
    counter: PromptCounter | None,
    config: Callable[[], ConfigDefaults],
) -> tuple[Corpus, tuple[str, ...]]:
    """The corpus `options` ask for, and what the pool's sources skipped or took for unknown.
    `config`: read only where the options name neither window nor output cap (the demo has
    its own)."""
    if options.demo:
        demo_corpus = build_demo_corpus(
            window=_given(options.window, DEMO_WINDOW),
            segments_per_stratum=_given(options.segments_per_stratum, DEMO_SEGMENTS_PER_STRATUM),
            segment_turns=_given(options.segment_turns, DEMO_SEGMENT_TURNS),
            seed=options.seed,
            shape=options.drawn_shape,
            fill_window=options.fill_window,
            counter=counter,
            answer_cap=_given(options.max_tokens, DEMO_ANSWER_CAP),
        )
        return demo_corpus, ()
    window, max_tokens = options.window, options.max_tokens
    if window is None or max_tokens is None:
        defaults = config()
        window, max_tokens = window or defaults.window, max_tokens or defaults.max_tokens
    check_answer_cap(max_tokens, window)
    pool = build_pool(
        options,
        window=window,
        counter=counter,
        answer_cap=max_tokens,
        # whole runs are drawn whole: an input too big for a corpus file is refused unbuilt
        size_cap=CORPUS_SIZE_LIMIT if options.drawn_shape == SHAPE_RUNS else None,
    )
    built = build_corpus(
        pool,
        window=window,
        segments_per_stratum=_given(options.segments_per_stratum, DEFAULT_SEGMENTS_PER_STRATUM),
        segment_turns=_given(options.segment_turns, DEFAULT_SEGMENT_TURNS),
        seed=options.seed,
        shape=options.drawn_shape,
        answer_cap=max_tokens,
    )
    return built, pool.notes


def _given(value: int | None, default: int) -> int:
    return default if value is None else value
