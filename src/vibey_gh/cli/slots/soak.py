"""`vibey-gh slots soak`."""

from __future__ import annotations

from pathlib import Path

import click
from msgspec.structs import replace

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
from .calibrate import DEMO_MAX_TOKENS, DEMO_WINDOW, think_overrides
from .calibration_stop import run_until_stopped

DEFAULT_DURATION = "10m"


@click.command()
@click.option(
    "--duration",
    default=DEFAULT_DURATION,
    show_default=True,
    help="How long to hold N: 8h, 30m, 1h30m, 90s (more than zero, at most a week).",
)
@click.option(
    "--slots", type=int, default=None, help="N to hold (default: today's evidence's ideal N)."
)
@click.option("--force", is_flag=True, help="Soak an N above what the evidence supports.")
@click.option("--demo", is_flag=True, help="Embedded runner, shipped model, shipped demo corpus.")
@click.option("--corpus", "corpus_path", type=click.Path(path_type=Path), help="Corpus file.")
@window_option("Tokens per slot (default: config).")
@click.option("--max-tokens", type=click.IntRange(1), help="Output cap per turn (default 768).")
@click.option("--runner", type=click.Choice(RUNNER_NAMES))
@click.option("--model", help="Model name (Ollama) or GGUF path; 'default' = shipped SmolLM2.")
@click.option("--threads", type=click.IntRange(1), help="CPU threads for the embedded runner.")
@click.option(
    "--port",
    type=click.IntRange(1, 65535),
    default=None,
    help="Port of the calibration runner (default: config calibration_port, 11435).",
)
@click.option(
    "--request-timeout",
    type=click.FloatRange(1.0),
    default=600.0,
    show_default=True,
    help="Seconds before an unanswered turn counts as failed.",
)
@click.option(
    "--wait-idle",
    type=float,
    default=None,
    metavar="SECONDS",
    help="Wait up to this long for production to unload its models instead of refusing.",
)
@click.option("--think-time", metavar="recorded|none|SECONDS", help="As for `slots calibrate`.")
@click.option("--think-cap", metavar="SECONDS", help="As for `slots calibrate`.")
@click.option("--if-requested", is_flag=True, help="Run only if a soak request exists.")
@click.option("--restart", is_flag=True, help="Discard this soak's checkpoint and start over.")
@json_option
@library_errors
@supported_platform_only
def soak(
    duration: str,
    slots: int | None,
    force: bool,
    demo: bool,
    corpus_path: Path | None,
    window: int | None,
    max_tokens: int | None,
    runner: str | None,
    model: str | None,
    threads: int | None,
    port: int | None,
    request_timeout: float,
    wait_idle: float | None,
    think_time: str | None,
    think_cap: str | None,
    if_requested: bool,
    restart: bool,
    as_json: bool,
) -> None:
    """Hold one N for hours beside production and say whether the answer held.

    The calibration runner is started at N on `calibration_port` beside production and the
    corpus replayed as a calibration step does, for --duration. Every second the soak reads
    memory (production's part apart), swap, the runner's resident memory and what the
    platform reports of temperatures, power, clocks and throttling (Linux /sys and
    nvidia-smi, macOS `pmset -g therm`); a reading a platform cannot take is recorded as
    missing with why. Throughput is measured per window (a twelfth of the soak): the soak
    holds when the last window stays within min_gain of the first at the bounds' confidence,
    no bound broke, and the runner's memory is not growing without bound. The soak is
    recorded beside the evidence (`slots show` shows it), checkpointed as it goes: SIGINT,
    SIGTERM or a reboot loses nothing, and the same command resumes it.

    N is today's evidence's ideal unless --slots says otherwise; an N above it needs --force.

    \b
    Examples:
      vibey-gh slots soak --corpus corpus.json --duration 8h
      vibey-gh slots soak --corpus corpus.json --slots 2 --duration 30m
      vibey-gh slots soak --demo --runner simulated --slots 2 --force --duration 2m
      vibey-gh slots soak --if-requested --corpus corpus.json     # from a storm
    """
    from ...config import load_config
    from ...interfaces.durations import parse_duration
    from ...slots.corpus.corpus import build_demo_corpus, load_corpus
    from ...slots.measurement.calibration_method import measured_window
    from ...slots.measurement.calibration_setup import CalibrationRequest
    from ...slots.soak.request import SoakRequest
    from ...slots.soak.soak import run_soak

    seconds = parse_duration(duration)
    if slots is not None and slots < 1:
        raise BadInput(f"--slots must be 1 or more, not {slots}")
    if wait_idle is not None and not wait_idle >= 0:
        raise BadInput(f"--wait-idle takes 0 or more seconds, not {wait_idle:g}")
    thinking = think_overrides(think_time, think_cap)
    config = load_config()
    if demo:
        if corpus_path is not None:
            raise BadInput("--demo builds its own corpus; drop --corpus")
        config = config.with_overrides(runner=runner or DEFAULT_RUNNER, model=model or "default")
        corpus = build_demo_corpus(window=window or DEMO_WINDOW)
        window = window or corpus.window
        max_tokens = max_tokens or corpus.answer_cap or DEMO_MAX_TOKENS
    else:
        if corpus_path is None:
            raise BadInput("--corpus FILE is required (or --demo); build one with `slots corpus`")
        config = config.with_overrides(runner=runner, model=model)
        corpus = load_corpus(corpus_path)
        window = measured_window(corpus, window, config)
    config = config.with_overrides(window=window, **thinking)
    if port is not None:
        config = replace(config, calibration_port=port)
    calibration = CalibrationRequest(
        config=config,
        corpus=corpus,
        window=window,
        max_tokens=max_tokens or corpus.answer_cap or config.max_tokens,
        if_requested=if_requested,
        threads=threads,
        request_timeout_s=request_timeout,
        wait_idle_s=wait_idle,
        restart=restart,
    )
    request = SoakRequest(calibration, seconds, slots, force)
    env = collaborators().calibration_environment(config, None)
    outcome = run_until_stopped(
        env.layout,
        "soak",
        lambda progress: run_soak(request, env, progress),
        "the runner is stopped and everything measured is kept",
    )
    if outcome is None:
        return
    if as_json:
        emit_json(outcome.to_json())
        return
    if outcome.skipped:
        click.echo(f"nothing to do: {outcome.reason} ({outcome.fingerprint})")
        return
    if outcome.path is None:
        click.echo(f"soak paused at N={outcome.slots}: {outcome.reason}")
        return
    held = "HOLDS" if outcome.holds else (outcome.verdict or "unknown").upper()
    click.echo(f"soak at N={outcome.slots}: {held}")
    for reason in outcome.reasons:
        click.echo(f"  {reason}")
    from ...slots.report.soak_view import trend_text

    # a soak too short to tell says so, and how long a soak would decide it
    trend = outcome.judgement.get("trend_per_hour")
    click.echo(f"  throughput trend: {trend_text(trend, outcome.measured_s, request.window_s)}")
    for unjudged in outcome.judgement.get("unjudged", []):
        click.echo(f"  {unjudged}")
    click.echo(f"soak:    {outcome.path}")
    click.echo(f"see it:  vibey-gh slots show {outcome.fingerprint}")
