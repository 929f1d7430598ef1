"""Each command's flags are named as the fields of the value the library builds of them, and
the flags left out mean what the library's own defaults mean."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from vibey_gh.cli.slots.calibrate import calibrate
from vibey_gh.cli.slots.corpus import corpus
from vibey_gh.cli.slots.soak import soak
from vibey_gh.cli.storm import run as storm_run
from vibey_gh.interfaces.think import ThinkAsked
from vibey_gh.slots.corpus.asked import CorpusOptions
from vibey_gh.slots.measurement.options import CalibrationOptions, SweepOptions
from vibey_gh.storm.setup import StormOptions


def parsed(command: click.Command, *args: str, leave_out: tuple[str, ...] = ()) -> dict[str, Any]:
    """What click hands `command` for `args`, less its own flags named in `leave_out`."""
    params = command.make_context(command.name or "", list(args)).params
    return {name: value for name, value in params.items() if name not in leave_out}


def test_calibrate_without_flags_asks_the_library_defaults() -> None:
    options = CalibrationOptions.of_sweep_flags(**parsed(calibrate, leave_out=("as_json",)))
    assert options == CalibrationOptions(sweep=SweepOptions())


def test_soak_without_flags_asks_the_library_defaults() -> None:
    flags = parsed(soak, leave_out=("as_json", "duration", "slots", "force"))
    assert CalibrationOptions.of_flags(**flags) == CalibrationOptions()


def test_a_calibration_flag_reaches_its_field() -> None:
    args = ("--window", "4096", "--think-time", "20", "--no-early-verdicts")
    options = CalibrationOptions.of_sweep_flags(**parsed(calibrate, *args, leave_out=("as_json",)))
    assert options.window == 4096 and options.think == ThinkAsked.parse("20")
    assert options.sweep is not None and options.sweep.early_verdicts is False


def test_storm_without_flags_asks_the_library_defaults() -> None:
    flags = parsed(storm_run, "queue", leave_out=("as_json",))
    assert StormOptions.of_flags(**flags) == StormOptions(queue=Path("queue"))


def test_corpus_flags_are_the_corpus_options() -> None:
    flags = parsed(
        corpus,
        "--demo",
        "--out",
        "c.json",
        leave_out=("as_json", "show", "from_my_lanes", "from_chat_logs"),
    )
    assert CorpusOptions(**flags) == CorpusOptions(out=Path("c.json"), demo=True)
