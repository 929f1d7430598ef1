"""`vibey-gh slots calibrate`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from msgspec.structs import replace

from ...config import STEP_SECONDS_RANGE, LocalModels
from ...errors import BadInput
from ...runners.registry import DEFAULT_RUNNER, RUNNER_NAMES
from ..common import (
    collaborators,
    emit_json,
    json_option,
    library_errors,
    supported_platform_only,
    window_option,
)
from .calibrate_after import describe_after, what_allowed_answers_now
from .calibration_stop import run_until_stopped

DEMO_WINDOW = 4096
DEMO_MAX_TOKENS = 128  # as slots.corpus.corpus.DEMO_ANSWER_CAP (not imported for --help)
DEMO_MAX_SLOTS = 4
# Steady-state steps of the demo: 20 s of measurement, 60 s at most (for an inconclusive step,
# a one-slot run whose interval is still wider than ±5%, or one that has not yet served the 30
# turns an interval wants) keep its five steps within a few minutes on two cores (6 min 39 s).
DEMO_MIN_STEP_SECONDS = 20.0
DEMO_MAX_STEP_SECONDS = 60.0
DEFAULT_MAX_SLOTS = 16  # as the sweep's default (slots.judging.sweep, not imported for --help)
MAX_SLOTS = 256


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


@click.command()
@click.option("--demo", is_flag=True, help="Embedded runner, shipped model, shipped demo corpus.")
@click.option("--corpus", "corpus_path", type=click.Path(path_type=Path), help="Corpus file.")
@window_option("Tokens per slot (default: config).")
@click.option("--slots", "slots_text", help="Explicit steps, e.g. 1,1,2,4 (default 1,1,2,3,…).")
@click.option(
    "--max-tokens",
    type=click.IntRange(1),
    help="Output cap per turn (default: the one the corpus left room for; else config, 768).",
)
@click.option("--max-runs", type=click.IntRange(1), help="Stop after this many new steps.")
@click.option(
    "--max-slots", type=click.IntRange(1, MAX_SLOTS), default=None, help="Largest N to try."
)
@click.option("--if-requested", is_flag=True, help="Run only if a calibration request exists.")
@click.option("--out", "out_dir", type=click.Path(path_type=Path), help="Also write evidence here.")
@click.option("--runner", type=click.Choice(RUNNER_NAMES))
@click.option("--model", help="Model name (Ollama) or GGUF path; 'default' = shipped SmolLM2.")
@click.option("--threads", type=click.IntRange(1), help="CPU threads for the embedded runner.")
@click.option(
    "--request-timeout",
    type=click.FloatRange(1.0),
    default=600.0,
    show_default=True,
    help="Seconds before an unanswered turn counts as failed.",
)
@click.option(
    "--wait-idle",
    "wait_idle",
    type=float,
    default=None,
    metavar="SECONDS",
    help="Wait up to this long for production to unload its models instead of refusing.",
)
@click.option(
    "--min-step-seconds",
    type=float,
    default=None,
    help="Measure each step at least this long (default: config, 60; demo 20).",
)
@click.option(
    "--max-step-seconds",
    type=float,
    default=None,
    help="Measure an inconclusive step, or a one-slot run whose interval is still wider than "
    "half of min_gain, at most this long (default: 5 × the minimum).",
)
@click.option(
    "--restart",
    is_flag=True,
    help="Discard this device and corpus's checkpoint (measured with other options) and "
    "start the sweep over.",
)
@click.option(
    "--port",
    type=click.IntRange(1, 65535),
    default=None,
    help="Port of the calibration runner (default: config calibration_port, 11435).",
)
@click.option(
    "--think-time",
    metavar="recorded|none|SECONDS",
    help="Wait before each turn, as a lane runs its tools: each turn's recorded think time, "
    "none (back to back), or a fixed number of seconds (default: config; recorded when the "
    "corpus holds think times, else none).",
)
@click.option(
    "--think-cap",
    metavar="SECONDS",
    help="Cut longer recorded think times to this (default: config, 60).",
)
@click.option(
    "--split-window",
    is_flag=True,
    help="What-if: replay the corpus at a smaller window (default half the corpus's); deeper "
    "turns are sent and counted as refused, never cut. Written to --out only, never evidence.",
)
@click.option(
    "--no-early-verdicts",
    is_flag=True,
    help="Replay every step to the end even once its verdict is certain.",
)
@json_option
@library_errors
@supported_platform_only
def calibrate(
    demo: bool,
    corpus_path: Path | None,
    window: int | None,
    slots_text: str | None,
    max_tokens: int | None,
    max_runs: int | None,
    max_slots: int | None,
    if_requested: bool,
    out_dir: Path | None,
    runner: str | None,
    model: str | None,
    threads: int | None,
    request_timeout: float,
    wait_idle: float | None,
    no_early_verdicts: bool,
    restart: bool,
    port: int | None,
    min_step_seconds: float | None,
    max_step_seconds: float | None,
    think_time: str | None,
    think_cap: str | None,
    split_window: bool,
    as_json: bool,
) -> None:
    """Sweep N = 1, 1, 2, 3, … parallel slots on a calibration runner and record evidence.

    The calibration runner is started beside production on `calibration_port` (11435); the
    production runner is never restarted. Each step replays the corpus with N closed-loop
    workers in a steady state (every turn once and at least --min-step-seconds of measurement;
    longer, up to --max-step-seconds, while its gain interval is inconclusive, and a one-slot
    run while its own interval is wider than half of min_gain) while memory,
    swap, the runner's log and production are watched every second. Every completed step is
    checkpointed: rerun the same command to resume (a larger --max-slots extends the sweep;
    options that change how a step is measured are named and need --restart). `--demo
    --runner simulated` shows a whole sweep in about a minute without a model.

    Before each turn a worker waits as the lane ran its tools (--think-time, --think-cap). A
    corpus of whole runs is decided on runs per hour, one of segments on turns per hour; one
    with fewer runs than twice --max-slots is named before the sweep.

    The sweep measures at the corpus's own window, with the output cap the corpus left room
    for: a --window or a config window that differs from the corpus's is refused naming both
    (a what-if goes through --split-window), and so is a --max-tokens that a turn cannot take.

    Production need not run: the evidence is then keyed to the calibration binary's version
    and the model's digest, which production matches once it runs them. A calibration
    binary of another version than production's is refused before the first step, unless
    --out is given (the sweep then goes there only). --wait-idle waits for production to
    unload its models, before the first step and before each re-measure. An --out folder in
    /proc, /sys or /dev, or a path that exists and is not a folder, is refused before anything
    else (exit 2). SIGTERM, SIGINT or SIGHUP stops the sweep within a few seconds, even while
    the runner is reading a prompt or writing an answer.

    \b
    Examples:
      vibey-gh slots calibrate --demo
      vibey-gh slots calibrate --demo --runner simulated --min-step-seconds 2
      vibey-gh slots calibrate --corpus corpus.json --out docs/evidence
      vibey-gh slots calibrate --corpus corpus.json --max-runs 1     # one step at a time
      vibey-gh slots calibrate --corpus corpus.json --max-slots 8    # extend a paused sweep
      vibey-gh slots calibrate --corpus corpus.json --port 11500     # 11435 is taken
      vibey-gh slots calibrate --if-requested --corpus corpus.json   # from a storm
      vibey-gh slots calibrate --corpus corpus.json --wait-idle 900  # after Ollama's keep-alive
      vibey-gh slots calibrate --corpus runs.json --think-time recorded --think-cap 120
      vibey-gh slots calibrate --corpus runs.json --think-time 20     # what if tools took 20 s
      vibey-gh slots calibrate --corpus corpus.json --split-window --slots 1,2 --out what-if

    --split-window asks the question "two slots of half the window cost one full slot's KV
    cache": the corpus, drawn for its own window, is replayed at half of it (or --window);
    each step reports the turns served and refused, the shortest refused prompt by the
    runner's count and the throughput of what it served. `slots compare` shows it beside the
    full-window evidence.
    """
    from ...config import load_config
    from ...slots.corpus.corpus import build_demo_corpus, load_corpus
    from ...slots.corpus.enough import too_few_runs
    from ...slots.measurement.calibrate import pending_request, run_calibration
    from ...slots.measurement.calibration_method import measured_window
    from ...slots.measurement.calibration_setup import CalibrationRequest

    slots = parse_slots(slots_text, max_slots or (DEMO_MAX_SLOTS if demo else DEFAULT_MAX_SLOTS))
    thinking = think_overrides(think_time, think_cap)
    if out_dir is not None:
        from ...platforms.storage.system_paths import check_output_folder

        check_output_folder(out_dir, "--out")  # again, with writability, before the first step
    if wait_idle is not None and not wait_idle >= 0:
        raise BadInput(f"--wait-idle takes 0 or more seconds, not {wait_idle:g}")
    config = load_config()
    written = config  # as `slots allowed` will read it, without this command's options
    parts = collaborators()
    if if_requested and not demo:
        # a storm or a cluster Job asks often: answer before building or reading any corpus
        asked = config.with_overrides(runner=runner, model=model)
        asked = asked.with_overrides(window=window or asked.window)
        fingerprint, requested = pending_request(
            parts.calibration_environment(asked, None), asked.window
        )
        if not requested:
            message = "no calibration request for this fingerprint"
            if as_json:
                emit_json({"fingerprint": fingerprint, "skipped": True, "reason": message})
            else:
                click.echo(f"nothing to do: {message} ({fingerprint})")
            return
    if demo:
        if corpus_path is not None:
            raise BadInput("--demo builds its own corpus; drop --corpus")
        config = config.with_overrides(runner=runner or DEFAULT_RUNNER, model=model or "default")
        corpus = build_demo_corpus(window=DEMO_WINDOW if split_window else window or DEMO_WINDOW)
        window = window or (corpus.window // 2 if split_window else corpus.window)
        if written.source is not None and written.window != window and not split_window:
            # the demo is drawn and measured at one window, its own: say it is not the config's
            click.echo(
                f"the demo corpus is drawn and measured at a window of {window:,}, not the "
                f"config's {written.window:,}: its evidence gates a config of {window:,} "
                f"(give --window {written.window} to draw the demo for the config's)",
                err=True,
            )
        max_tokens = max_tokens or corpus.answer_cap
        max_slots = max_slots or DEMO_MAX_SLOTS
    else:
        config = config.with_overrides(runner=runner, model=model)
        if corpus_path is None:
            raise BadInput("--corpus FILE is required (or --demo); build one with `slots corpus`")
        corpus = load_corpus(corpus_path)
        # said before anything else is checked or measured: the sweep could not decide
        warning = too_few_runs(corpus.segments, corpus.whole_runs, max_slots or DEFAULT_MAX_SLOTS)
        if warning is not None:
            click.echo(f"warning: {warning}", err=True)
        window = measured_window(corpus, window, written, split=split_window)
    config = config.with_overrides(window=window, **thinking)
    if port is not None:
        config = replace(config, calibration_port=port)
    config = _step_seconds(config, demo, min_step_seconds, max_step_seconds)
    request = CalibrationRequest(
        config=config,
        corpus=corpus,
        window=window,
        # the cap the corpus left room for, unless told otherwise
        max_tokens=max_tokens or corpus.answer_cap or config.max_tokens,
        slots=slots,
        max_runs=max_runs,
        max_slots=max_slots or DEFAULT_MAX_SLOTS,
        if_requested=if_requested,
        out_dir=out_dir,
        threads=threads,
        request_timeout_s=request_timeout,
        early_verdicts=not no_early_verdicts,
        wait_idle_s=wait_idle,
        restart=restart,
        split_window=split_window,
    )
    env = parts.calibration_environment(config, None)
    outcome = run_until_stopped(
        env.layout,
        "calibration",
        lambda progress: run_calibration(request, env, progress),
        "the runner is stopped and every completed step is kept",
    )
    if outcome is None:
        return
    if outcome.skipped:
        if as_json:
            emit_json(outcome.to_json())
        else:
            click.echo(f"nothing to do: {outcome.reason} ({outcome.fingerprint})")
        return
    # A what-if is never evidence: what `allowed` answers is not its business. Otherwise what
    # `allowed` would answer is asked as a what-if, filing no calibration request (a demo's
    # config names another setup, unmeasured: asking `allowed` itself would file one).
    after = (
        None
        if split_window
        else what_allowed_answers_now(config, parts.what_if_allowed, written, outcome.fingerprint)
    )
    if as_json:
        emit_json({**outcome.to_json(), "after": after})
        return
    if split_window:
        click.echo("a split-window what-if: written to --out only, never this device's evidence")
    elif outcome.version_mismatch:
        click.echo(f"NOT RECORDED as this device's evidence: {outcome.version_mismatch}", err=True)
    elif not outcome.recorded and outcome.kept is None:
        click.echo("NOT RECORDED as this device's evidence: " + outcome.reason, err=True)
    state = "complete" if outcome.complete else "paused (rerun to continue)"
    click.echo(f"sweep {state}: ideal {outcome.ideal} — {outcome.reason}")
    for line in outcome.evidence_change_lines():
        click.echo(line)
    from ...slots.report.summary import more_slots_line

    largest = (
        max(slots) if slots else (max_slots or (DEMO_MAX_SLOTS if demo else DEFAULT_MAX_SLOTS))
    )
    more = more_slots_line(outcome.ideal or 1, largest, outcome.stop_reason)
    if more is not None:
        click.echo(more)
    for path in ([outcome.evidence] if outcome.evidence else []) + outcome.out_files:
        if path.suffix == ".json":
            click.echo(f"evidence: {path}")
            click.echo(f"summary:  {path.with_suffix('.md')}")
            click.echo(f"report:   {path.with_name(path.stem + '-report.md')}")
    if outcome.evidence is not None:
        # a demo's fingerprint (its runner, window) need not be the config's: name it
        click.echo(f"see it:   vibey-gh slots show {outcome.fingerprint}")
    for line in describe_after(after) if after is not None else []:
        click.echo(line)


def think_overrides(think_time: str | None, think_cap: str | None) -> dict[str, Any]:
    """The config changes --think-time and --think-cap ask for; bad values are bad input."""
    from ...interfaces.think import check_think_cap, parse_think_time

    changes: dict[str, Any] = {}
    if think_time is not None:
        mode, seconds = parse_think_time(think_time.strip())
        changes["think_time"] = seconds if mode == "fixed" else mode
    if think_cap is not None:
        try:
            cap: Any = float(think_cap)
        except ValueError:
            cap = think_cap
        changes["think_cap"] = check_think_cap(cap)
    return changes


def _step_seconds(
    config: LocalModels, demo: bool, shortest: float | None, longest: float | None
) -> LocalModels:
    """The config with the step lengths asked for on the command line (the demo's own)."""
    low, high = STEP_SECONDS_RANGE
    for option, value in (("--min-step-seconds", shortest), ("--max-step-seconds", longest)):
        if value is not None and not low <= value <= 5 * high:
            raise BadInput(f"{option} must be between {low:g} and {high:g}, not {value:g}")
    if demo and shortest is None:
        shortest = DEMO_MIN_STEP_SECONDS
        longest = longest or max(DEMO_MAX_STEP_SECONDS, shortest)
    if shortest is not None:
        config = replace(config, min_step_seconds=shortest)
        if longest is None and config.max_step_seconds is not None:
            longest = max(config.max_step_seconds, shortest)
    if longest is not None:
        if longest < config.min_step_seconds:
            raise BadInput(
                f"--max-step-seconds {longest:g} is below the minimum {config.min_step_seconds:g}"
            )
        config = replace(config, max_step_seconds=longest)
    return config
