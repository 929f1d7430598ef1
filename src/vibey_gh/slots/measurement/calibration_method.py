"""The method a calibration request measures by: the method section its evidence and checkpoints
are keyed to, the wait before each turn, and the checks that its corpus fits the window and
its runs a step."""

from __future__ import annotations

from ...config import LocalModels
from ...errors import BadInput
from ...interfaces.think import ThinkPolicy
from ..corpus.corpus import Corpus
from ..evidence.sections import MethodSection
from .calibration_setup import CalibrationRequest


def measured_window(
    corpus: Corpus, asked: int | None, config: LocalModels, *, split: bool = False
) -> int:
    """The window a calibration measures at: the corpus's own, unless told otherwise.

    A window asked for (--window) or set by a config file that differs from the one the corpus
    was drawn for is refused, both named: a corpus drawn for one window says nothing true about
    another (its strata, its deepest turns, the room left for answers), and evidence keyed to a
    window the operator did not choose gates nothing. A deliberate what-if goes through
    --split-window, which replays at a smaller window and is never evidence."""
    if split:
        return asked or corpus.window // 2
    if asked is not None:
        if asked != corpus.window:
            raise BadInput(
                f"--window {asked:,} differs from the corpus's window {corpus.window:,}: "
                f"calibrate at {corpus.window:,}, draw a corpus for {asked:,}, or ask a "
                "what-if with --split-window"
            )
        return asked
    if config.source is not None and config.window != corpus.window:
        raise BadInput(
            f"the config ({config.source}) has window {config.window:,}, the corpus's window "
            f"is {corpus.window:,}: draw a corpus for {config.window:,}, or give --window "
            f"{corpus.window:,} to measure at the corpus's (evidence `allowed` uses only "
            f"when the config says {corpus.window:,})"
        )
    return corpus.window


def check_corpus_fits(corpus: Corpus, window: int, max_tokens: int) -> None:
    """Every turn's prompt and its answer cap fit the window together (the headroom rule):
    a turn that did not would make the runner shift, cut or refuse it, so none is sent."""
    over = [turn for turn in corpus.turns() if not turn.fits(window, max_tokens)]
    if not over:
        return
    deepest = max(over, key=lambda turn: turn.depth_estimate)
    room = window - deepest.depth_estimate
    if room < 1:
        raise BadInput(
            f"the corpus's deepest turn is ~{deepest.depth_estimate} tokens, more than the "
            f"window {window}; use a larger --window or a corpus drawn for this window"
        )
    raise BadInput(
        f"turn {deepest.id} (~{deepest.depth_estimate:,} tokens) leaves room for "
        f"{room:,} tokens of answer in the window of {window:,}, not the {max_tokens:,} of the "
        f"output cap: give --max-tokens {room:,} or less, or draw the corpus with "
        f"--max-tokens {max_tokens:,}"
    )


def think_policy_of(req: CalibrationRequest) -> ThinkPolicy:
    """The wait before each turn: the command line's over the config's, for this corpus."""
    asked = req.think.over(req.config.think)
    return asked.for_corpus(turn.think_s for turn in req.corpus.turns())


def check_turns_fit_a_step(req: CalibrationRequest, policy: ThinkPolicy) -> None:
    """A turn whose wait alone reaches a step's cap could never complete inside one. Whole runs
    need not (a step whose think policy waits is judged turn by turn, by the closed-system law:
    `judging.statistics.think_law`)."""
    cap = req.config.step_cap_seconds
    for unit in req.corpus.segments:
        for turn in unit.turns:
            wait = policy.seconds_before(turn.think_s)
            if wait >= cap:
                raise BadInput(
                    f"{turn.id} waits {wait:g} s of think time, at least a step's cap of "
                    f"{cap:g} s, so it could never complete inside a step: lower --think-cap "
                    "or --think-time, or raise --max-step-seconds"
                )


def method_of(req: CalibrationRequest) -> MethodSection:
    method: MethodSection = {
        "runner": req.config.runner,
        "model": req.config.model,
        "window": req.window,
        "max_tokens": req.max_tokens,
        "temperature": 0.0,
        "seed": 42,
        "slots": list(req.slots) if req.slots else "1,1,2,3,…",
        "max_slots": req.max_slots,
        "segment_order": "closed-loop workers cycling through the corpus",
        # turns are streamed and reassembled, their token timing recorded: a checkpoint of
        # unstreamed steps (no such key) has another hash and is never resumed here
        "turns": "streamed",
        # steady-state steps with a throughput interval: evidence of the one-pass method
        # (no "steps" key) has another hash, so its checkpoints are never resumed here
        "steps": {
            "kind": "steady-state",
            "interval": "batch means",
            "min_seconds": req.config.min_step_seconds,
            "max_seconds": req.config.step_cap_seconds,
            # a gain is a ratio of two measured throughputs: its interval carries both
            "gain_interval": "ratio of the step's and the bar's batch means",
            # the bar (each one-slot run) is measured until its interval is within ±min_gain/2
            "one_slot_until": "interval within half of min_gain",
            # so is a step that serves more than the best before it: the next one's bar
            "best_until": "interval within half of min_gain",
        },
        # the wait before each turn: a checkpoint of another policy is never resumed
        "think": think_policy_of(req).to_json(),
    }
    if req.config.interleave_seconds is not None:
        # only when set, as split_window: a checkpoint of steps that did not interleave (or
        # in blocks of another length) is never resumed with interleaved ones
        method["interleave_seconds"] = req.config.interleave_seconds
    if req.split_window:  # only when set: the method of every ordinary sweep keeps its hash
        method["split_window"] = True
    if req.corpus.shape == "runs":
        # whole runs are measured to an interval of each worker's run progress: a checkpoint
        # whose steps stopped on counted runs has another hash and is never resumed here
        method["runs_interval"] = "batch means of run progress"
    return method
