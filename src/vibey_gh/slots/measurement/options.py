"""What a calibration or a soak is asked, checked once, and the request it resolves to.

The command line (or any other caller) builds one `CalibrationOptions` from what it was given,
each value typed and checked as it is built. `resolve_request` settles it against the config
and the corpus — the demo's corpus, window, output cap and step lengths, the corpus's own
window, the calibration port — into the `CalibrationRequest` a sweep or a soak replays.
`calibrate_as_asked` and `soak_as_asked` are the whole of `slots calibrate` and `slots soak`
below their rendering: a storm's `--if-requested` answered before any corpus is read, the run
under the model lock, and, after a sweep, what `slots allowed` answers with its evidence.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

from msgspec import structs
from msgspec.structs import replace

from ...config import INTERLEAVE_SECONDS_RANGE, STEP_SECONDS_RANGE, LocalModels, load_config
from ...errors import BadInput
from ...interfaces.think import ThinkAsked
from ...platforms.storage.system_paths import check_output_folder
from ...runners.registry import DEFAULT_RUNNER
from ...state import StateLayout
from ..corpus.corpus import build_demo_corpus, load_corpus
from ..corpus.enough import DEFAULT_MAX_SLOTS, too_few_runs
from ..report.after_sweep import AskAllowed, describe_after, what_allowed_answers_now
from ..report.summary import more_slots_line
from .calibrate import NOT_REQUESTED, CalibrationProgress, pending_request, run_calibration
from .calibration_method import measured_window
from .calibration_setup import (
    AnswerAfter,
    CalibrationOutcome,
    CalibrationRequest,
    Environment,
    SkippedSweep,
    check_wait_idle,
)

DEMO_WINDOW = 4096
DEMO_MAX_SLOTS = 4
# Steady-state steps of the demo: 20 s of measurement, 60 s at most (for an inconclusive step,
# a one-slot run whose interval is still wider than ±5%, or one that has not yet served the 30
# turns an interval wants) keep its five steps within a few minutes on two cores (6 min 39 s).
DEMO_MIN_STEP_SECONDS = 20.0
DEMO_MAX_STEP_SECONDS = 60.0
# An interleaved step needs eight pairs of blocks for an interval (`statistics.paired`,
# MIN_PAIRS): its cap must hold at least twenty blocks (the waits between them in no block),
# and the demo's holds thirty
BLOCKS_IN_A_CAP = 20
DEMO_BLOCKS_IN_A_CAP = 30
# The demo decides in about four minutes on two quiet cores. Its one-slot level wanders 5–10%
# from one minute to the next there, more than the gain it must tell from 10%, so its steps
# above one slot interleave (blocks of 7 s, each about four turns at one slot); and its turns
# reach 2,048 tokens (half its window) with answers of 64 tokens, 1–4 s each at one slot, where
# turns reaching the whole window took up to 15 s, longer than a block (docs/performance.md,
# "The demo, interleaved"). `--interleave-seconds 0` measures it step by step instead.
DEMO_INTERLEAVE_SECONDS = 7.0
DEMO_DEPTH = 2048
DEMO_QUICK_ANSWER_CAP = 64


def parse_slots(text: str | None, largest: int = DEFAULT_MAX_SLOTS) -> tuple[int, ...] | None:
    """`--slots 1,1,2,4` as counts, each between 1 and `largest` (the largest N to try)."""
    if text is None:
        return None
    parts = [part.strip() for part in text.split(",")]
    if any(not part for part in parts):
        raise BadInput(f"--slots has an empty item in {text!r}; give counts like 1,1,2,4")
    if not all(part.isdigit() and part.isascii() for part in parts):
        raise BadInput(f"--slots takes a comma-separated list of whole numbers, not {text!r}")
    values = tuple(int(part) for part in parts)
    outside = [part for part, value in zip(parts, values, strict=True) if not 1 <= value <= largest]
    if outside:
        raise BadInput(
            f"--slots counts must be between 1 and {largest} (the largest N to try, "
            f"--max-slots), not {outside[0][:24]}"
        )
    return values


@dataclass(frozen=True)
class StepSeconds:
    """How long each step is measured, as asked (None: the config's; the demo's own)."""

    shortest: float | None = None
    longest: float | None = None
    interleave: float | None = None

    def __post_init__(self) -> None:
        low, high = STEP_SECONDS_RANGE
        for option, value in (("--min-step-seconds", self.shortest),
                              ("--max-step-seconds", self.longest)):  # fmt: skip
            if value is not None and not low <= value <= 5 * high:
                raise BadInput(f"{option} must be between {low:g} and {high:g}, not {value:g}")
        low, high = INTERLEAVE_SECONDS_RANGE
        if self.interleave not in (None, 0.0) and not low <= self.interleave <= high:
            raise BadInput(
                f"--interleave-seconds must be between {low:g} and {high:g} (or 0: off), "
                f"not {self.interleave:g}"
            )

    def over(self, config: LocalModels, demo: bool) -> LocalModels:
        """The config with these step lengths and blocks (the demo's own where none is
        asked)."""
        shortest, longest = self.shortest, self.longest
        blocks = self.interleave
        if demo and shortest is None and blocks is None:
            blocks = DEMO_INTERLEAVE_SECONDS
        if blocks is not None:
            blocks = blocks or None  # 0: off, the config's blocks too
            config = replace(config, interleave_seconds=blocks)
        if demo and shortest is None:
            shortest = DEMO_MIN_STEP_SECONDS
            cap = DEMO_MAX_STEP_SECONDS if blocks is None else DEMO_BLOCKS_IN_A_CAP * blocks
            longest = longest or max(cap, shortest)
        if shortest is not None:
            config = replace(config, min_step_seconds=shortest)
            if longest is None and config.max_step_seconds is not None:
                longest = max(config.max_step_seconds, shortest)
        if longest is not None:
            if longest < config.min_step_seconds:
                raise BadInput(
                    f"--max-step-seconds {longest:g} is below the minimum "
                    f"{config.min_step_seconds:g}"
                )
            config = replace(config, max_step_seconds=longest)
        _check_blocks_fit(config)
        return config


def _check_blocks_fit(config: LocalModels) -> None:
    """An interleaved step's cap holds the twenty blocks its interval needs."""
    blocks = config.interleave_seconds
    if blocks is None or config.step_cap_seconds >= BLOCKS_IN_A_CAP * blocks:
        return
    raise BadInput(
        f"a step of at most {config.step_cap_seconds:g} s holds fewer than the "
        f"{BLOCKS_IN_A_CAP} blocks of {blocks:g} s an interleaved step needs for an interval: "
        f"raise --max-step-seconds to {BLOCKS_IN_A_CAP * blocks:g} or more, or shorten "
        "--interleave-seconds"
    )


@dataclass(frozen=True)
class SweepOptions:
    """What only a sweep is asked (a soak holds one N): which steps, how many, where else its
    evidence goes, how each step is measured."""

    slots: tuple[int, ...] | None = None
    max_runs: int | None = None
    max_slots: int | None = None
    out_dir: Path | None = None
    early_verdicts: bool = True
    split_window: bool = False
    steps: StepSeconds = StepSeconds()


@dataclass(frozen=True)
class CalibrationOptions:
    """What `slots calibrate` and `slots soak` are asked, before the config and the corpus
    settle it. None: as the config (or the corpus, or the demo) says. `sweep`: a sweep's own
    options; None for a soak."""

    demo: bool = False
    corpus_path: Path | None = None
    window: int | None = None
    max_tokens: int | None = None
    runner: str | None = None
    model: str | None = None
    threads: int | None = None
    port: int | None = None
    request_timeout_s: float = 600.0
    wait_idle_s: float | None = None
    think: ThinkAsked = ThinkAsked()
    if_requested: bool = False
    restart: bool = False
    sweep: SweepOptions | None = None

    def __post_init__(self) -> None:
        check_wait_idle(self.wait_idle_s)

    @classmethod
    def of_flags(
        cls, think_time: str | None, think_cap: str | None, **flags: Any
    ) -> CalibrationOptions:
        """The value of the command line's flags, each named as its field; the think time
        and its cap as given, parsed here once."""
        think = ThinkAsked.parse(think_time and think_time.strip(), think_cap)
        return cls(think=think, **flags)

    @classmethod
    def of_sweep_flags(
        cls,
        slots_text: str | None,
        max_runs: int | None,
        max_slots: int | None,
        out_dir: Path | None,
        min_step_seconds: float | None,
        max_step_seconds: float | None,
        interleave_seconds: float | None,
        split_window: bool,
        no_early_verdicts: bool,
        **flags: Any,
    ) -> CalibrationOptions:
        """`of_flags` with a sweep's own flags (`slots calibrate`'s)."""
        sweep = SweepOptions(
            slots=parse_slots(slots_text, largest_slots(max_slots, flags["demo"])),
            max_runs=max_runs,
            max_slots=max_slots,
            out_dir=out_dir,
            early_verdicts=not no_early_verdicts,
            split_window=split_window,
            steps=StepSeconds(min_step_seconds, max_step_seconds, interleave_seconds),
        )
        return cls.of_flags(sweep=sweep, **flags)

    @property
    def most_slots(self) -> int:
        """The largest N the sweep was asked to try: its explicit steps' largest, if any."""
        explicit = self.sweep.slots if self.sweep is not None else None
        return max(explicit) if explicit else self.largest

    @property
    def largest(self) -> int:
        """The largest N a sweep tries (a soak's request: the default)."""
        if self.sweep is None:
            return DEFAULT_MAX_SLOTS
        return largest_slots(self.sweep.max_slots, self.demo)


def largest_slots(max_slots: int | None, demo: bool) -> int:
    """--max-slots, else the demo's few or the default."""
    return max_slots or (DEMO_MAX_SLOTS if demo else DEFAULT_MAX_SLOTS)


def resolve_request(
    options: CalibrationOptions, written: LocalModels, warn: Callable[[str], None]
) -> CalibrationRequest:
    """The request `options` ask for under the config `written` (as `slots allowed` reads it).

    A sweep says, through `warn`, what it could not decide or what its evidence gates: a corpus
    with too few whole runs, a demo drawn at another window than the config's."""
    sweep = options.sweep or SweepOptions()
    split = sweep.split_window
    if options.demo:
        if options.corpus_path is not None:
            raise BadInput("--demo builds its own corpus; drop --corpus")
        runner, model = options.runner or DEFAULT_RUNNER, options.model or "default"
        config = written.with_overrides(runner=runner, model=model)
        if split:
            corpus = build_demo_corpus(window=DEMO_WINDOW)
            window = options.window or corpus.window // 2
        else:
            window = options.window or DEMO_WINDOW
            corpus = build_demo_corpus(
                window=min(window, DEMO_DEPTH), answer_cap=DEMO_QUICK_ANSWER_CAP
            )
        if options.sweep and written.source is not None and written.window != window and not split:
            # the demo is drawn and measured at one window, its own: say it is not the config's
            warn(
                f"the demo corpus is drawn and measured at a window of {window:,}, not the "
                f"config's {written.window:,}: its evidence gates a config of {window:,} "
                f"(give --window {written.window} to draw the demo for the config's)"
            )
    else:
        config = written.with_overrides(runner=options.runner, model=options.model)
        if options.corpus_path is None:
            raise BadInput("--corpus FILE is required (or --demo); build one with `slots corpus`")
        corpus = load_corpus(options.corpus_path)
        # said before anything else is checked or measured: the sweep could not decide
        if options.sweep is not None:
            warning = too_few_runs(corpus.segments, corpus.whole_runs, options.largest)
            if warning is not None:
                warn(f"warning: {warning}")
        window = measured_window(corpus, options.window, written, split=split)
    config = config.with_overrides(window=window)
    if options.port is not None:
        config = replace(config, calibration_port=options.port)
    if options.sweep is not None:
        config = sweep.steps.over(config, options.demo)
    return CalibrationRequest(
        config=config,
        corpus=corpus,
        window=window,
        # the cap the corpus left room for, unless told otherwise
        max_tokens=options.max_tokens or corpus.answer_cap or config.max_tokens,
        slots=sweep.slots,
        max_runs=sweep.max_runs,
        max_slots=options.largest,
        if_requested=options.if_requested,
        out_dir=sweep.out_dir,
        threads=options.threads,
        request_timeout_s=options.request_timeout_s,
        early_verdicts=sweep.early_verdicts,
        wait_idle_s=options.wait_idle_s,
        restart=options.restart,
        split_window=split,
        think=options.think,
    )


class CalibrationWorld(Protocol):
    """What a calibration acts through (the composition root's collaborators)."""

    def calibration_environment(
        self, config: LocalModels, layout: StateLayout | None
    ) -> Environment: ...

    @property
    def what_if_allowed(self) -> AskAllowed: ...


T = TypeVar("T")


class LockedRun(Protocol):
    """Runs `work` under the model lock with a progress display, until it is done or a stop
    signal ends it (None)."""

    def __call__(
        self, layout: StateLayout, work: Callable[[CalibrationProgress], T]
    ) -> T | None: ...


THIS_DEVICE = "this device's evidence"


@dataclass(frozen=True)
class SweepAnswer:
    """A sweep's outcome, the request it ran (None: skipped before any corpus was read) and
    what `slots allowed` answers after it (None for a what-if or a skipped sweep)."""

    outcome: CalibrationOutcome
    request: CalibrationRequest | None = None
    after: dict[str, Any] | None = None

    def output(self) -> SkippedSweep | CalibrationOutcome | AnswerAfter:
        """The command's answer (`--json`, written by `as_json`): its form says whether the
        calibration ran."""
        if self.request is None:
            return SkippedSweep(self.outcome.fingerprint, True, self.outcome.reason)
        if self.outcome.skipped:
            return self.outcome
        return AnswerAfter(**structs.asdict(self.outcome), after=self.after)

    def not_recorded(self) -> str | None:
        """Why the sweep is not this device's evidence, when it should have been (stderr)."""
        outcome = self.outcome
        if outcome.skipped or (self.request is not None and self.request.split_window):
            return None
        if outcome.version_mismatch:
            return f"NOT RECORDED as {THIS_DEVICE}: {outcome.version_mismatch}"
        if not outcome.recorded and outcome.kept is None:
            return f"NOT RECORDED as {THIS_DEVICE}: {outcome.reason}"
        return None

    def lines(self, largest: int) -> list[str]:
        """What `slots calibrate` says of the sweep; `largest`: the largest N it was to try."""
        outcome = self.outcome
        if outcome.skipped:
            return [f"nothing to do: {outcome.reason} ({outcome.fingerprint})"]
        lines = []
        if self.request is not None and self.request.split_window:
            lines.append(
                "a split-window what-if: written to --out only, never this device's evidence"
            )
        state = "complete" if outcome.complete else "paused (rerun to continue)"
        lines.append(f"sweep {state}: ideal {outcome.ideal} — {outcome.reason}")
        lines += outcome.evidence_change_lines()
        lines += filter(None, [more_slots_line(outcome.ideal or 1, largest, outcome.stop_reason)])
        for path in ([outcome.evidence] if outcome.evidence else []) + list(outcome.out_files):
            if path.suffix == ".json":
                lines.append(f"evidence: {path}")
                lines.append(f"summary:  {path.with_suffix('.md')}")
                lines.append(f"report:   {path.with_name(path.stem + '-report.md')}")
        if outcome.evidence is not None:
            # a demo's fingerprint (its runner, window) need not be the config's: name it
            lines.append(f"see it:   vibey-gh slots show {outcome.fingerprint}")
        return lines + (describe_after(self.after) if self.after is not None else [])


def calibrate_as_asked(
    options: CalibrationOptions,
    world: CalibrationWorld,
    run: LockedRun,
    warn: Callable[[str], None],
    written: LocalModels | None = None,
) -> SweepAnswer | None:
    """`slots calibrate`: the sweep `options` ask for, run through `run`; None when it was
    interrupted without a signal. `written`: the config (default: read now). An --out folder
    the system owns, or one that cannot be written, is refused before anything else."""
    if options.sweep is not None and options.sweep.out_dir is not None:
        check_output_folder(options.sweep.out_dir, "--out")
    written = load_config() if written is None else written
    if options.if_requested and not options.demo:
        # a storm or a cluster Job asks often: answer before building or reading any corpus
        asked = written.with_overrides(runner=options.runner, model=options.model)
        asked = asked.with_overrides(window=options.window or asked.window)
        fingerprint, requested = pending_request(
            world.calibration_environment(asked, None), asked.window
        )
        if not requested:
            skipped = CalibrationOutcome(
                fingerprint, None, NOT_REQUESTED, False, False, None, skipped=True
            )
            return SweepAnswer(skipped)
    request = resolve_request(options, written, warn)
    env = world.calibration_environment(request.config, None)
    outcome = run(env.layout, lambda progress: run_calibration(request, env, progress))
    if outcome is None:
        return None
    if outcome.skipped or request.split_window:
        # a what-if is never evidence: what `allowed` answers is not its business
        return SweepAnswer(outcome, request)
    # asked as a what-if, filing no calibration request (a demo's config names another
    # setup, unmeasured: asking `allowed` itself would file one)
    after = what_allowed_answers_now(
        request.config, world.what_if_allowed, written, outcome.fingerprint
    )
    return SweepAnswer(outcome, request, after)
