"""The command line's shared options, each declared once, and the one value they build.

`slots calibrate` and `slots soak` take the same calibration options (`calibration_flags`),
each named as its field of the one `CalibrationOptions` value the library builds of them
(`CalibrationOptions.of_flags`), checks, resolves and runs; `lane run` and `storm run` the
same lane options (`lane_flags`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from ..config import MAX_WINDOW, MIN_WINDOW
from ..runners.registry import RUNNER_NAMES

F = TypeVar("F", bound=Callable[..., Any])


def stacked(*options: Callable[[F], F]) -> Callable[[F], F]:
    """Options applied as one decorator, shown in `--help` in the order given."""

    def decorate(func: F) -> F:
        for option in reversed(options):
            func = option(func)
        return func

    return decorate


PATH = click.Path(path_type=Path)
SHAPES = click.Choice(["runs", "segments"])
json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")


def defaulted(*names: str, kind: Any, default: object, help_text: str) -> Callable[[F], F]:
    """An option whose default `--help` shows."""
    return click.option(*names, type=kind, default=default, show_default=True, help=help_text)


def count_option(name: str, default: int, help_text: str, least: int = 1) -> Callable[[F], F]:
    """A whole number of at least `least`, its default shown."""
    return defaulted(name, kind=click.IntRange(least), default=default, help_text=help_text)


def inputs_option(name: str, help_text: str) -> Callable[[F], F]:
    """A repeatable option naming a file or folder to read."""
    return click.option(name, multiple=True, type=PATH, help=help_text)


def window_option(help_text: str) -> Callable[[F], F]:
    """`--window N`: one range for every command, the one the config accepts."""
    return click.option("--window", type=click.IntRange(MIN_WINDOW, MAX_WINDOW), help=help_text)


def max_tokens_option(help_text: str, name: str = "--max-tokens") -> Callable[[F], F]:
    return click.option(name, type=click.IntRange(1), help=help_text)


def port_option(help_text: str) -> Callable[[F], F]:
    return click.option("--port", type=click.IntRange(1, 65535), help=help_text)


def threads_option(help_text: str) -> Callable[[F], F]:
    return click.option("--threads", type=click.IntRange(1), help=help_text)


def calibration_flags(asks: str, restarts: str) -> Callable[[F], F]:
    """What a calibration and a soak are both asked. `asks`: the request --if-requested looks
    for; `restarts`: what --restart discards."""
    return stacked(
        click.option(
            "--demo", is_flag=True, help="Embedded runner, shipped model, shipped demo corpus."
        ),
        click.option(
            "--corpus", "corpus_path", type=click.Path(path_type=Path), help="Corpus file."
        ),
        window_option("Tokens per slot (default: config)."),
        max_tokens_option(
            "Output cap per turn (default: the one the corpus left room for; else config, 768)."
        ),
        click.option("--runner", type=click.Choice(RUNNER_NAMES)),
        click.option(
            "--model", help="Model name (Ollama) or GGUF path; 'default' = shipped SmolLM2."
        ),
        threads_option("CPU threads for the embedded runner."),
        port_option("Port of the calibration runner (default: config calibration_port, 11435)."),
        click.option(
            "--request-timeout",
            "request_timeout_s",
            type=click.FloatRange(1.0),
            default=600.0,
            show_default=True,
            help="Seconds before an unanswered turn counts as failed.",
        ),
        click.option(
            "--wait-idle",
            "wait_idle_s",
            type=float,
            metavar="SECONDS",
            help="Wait up to this long for production to unload its models instead of refusing.",
        ),
        click.option(
            "--think-time",
            metavar="recorded|none|SECONDS",
            help="Wait before each turn, as a lane runs its tools: each turn's recorded think "
            "time, none (back to back), or a fixed number of seconds (default: config; recorded "
            "when the corpus holds think times, else none).",
        ),
        click.option(
            "--think-cap",
            metavar="SECONDS",
            help="Cut longer recorded think times to this (default: config, 60).",
        ),
        click.option("--if-requested", is_flag=True, help=f"Run only if {asks} exists."),
        click.option("--restart", is_flag=True, help=restarts),
    )


def lane_flags(of: str = "") -> Callable[[F], F]:
    """--max-turns and --retries of a lane; `of`: whose lanes, said after each help."""
    each, per_lane = ("each", ", per lane") if of else ("the", "")
    return stacked(
        count_option(
            "--max-turns", 32, f"End {each} lane after this many turns without a plain answer{of}."
        ),
        count_option(
            "--retries", 2, f"Times a malformed tool call is sent again{per_lane}{of}.", least=0
        ),
    )
