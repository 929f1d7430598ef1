"""`vibey-gh storm run`: work a queue of lane specs, obeying `slots allowed`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ..interfaces import schema
from ..storm.setup import StormOptions
from ..storm.stopping import run_storm_until_stopped
from .common import collaborators, emit_json, machine_command
from .options import SHAPES, count_option, defaulted, lane_flags, max_tokens_option, threads_option


@click.command()
@click.argument("queue", metavar="QUEUE_DIR", type=click.Path(path_type=Path))
@click.option("--once", is_flag=True, help="Exit once the queue is empty (after calibrating).")
@click.option("--max-passes", type=click.IntRange(1), help="Stop claiming after N passes.")
@defaulted(
    "--poll",
    "poll_s",
    kind=click.FloatRange(min=0.01),
    default=30.0,
    help_text="Seconds between passes while idle.",
)
@lane_flags(" (as `lane run`)")
@max_tokens_option("Lanes' output cap (default: config).")
@click.option("--no-calibrate", is_flag=True, help="Never calibrate, even when requested.")
@click.option("--calibration-slots", help="Steps of an idle calibration, e.g. 1,1,2.")
@max_tokens_option("Its output cap.", "--calibration-max-tokens")
@click.option("--calibration-max-runs", type=click.IntRange(1), help="Its new steps per storm.")
@count_option(
    "--calibration-segments", 5, "Its corpus: segments (or whole runs) per depth stratum."
)
@count_option("--calibration-segment-turns", 3, "Its corpus: consecutive turns per segment.")
@click.option(
    "--calibration-shape",
    type=SHAPES,
    help="Its corpus: whole runs or segments. Default: by the source — whole runs from the "
    "storm's lane records (decided on runs/h, with their recorded tool time), segments from "
    "the specs in done/.",
)
@count_option(
    "--min-lane-turns",
    60,
    "Build the corpus from the storm's lane records once they hold this many turns.",
)
@threads_option("CPU threads of the calibration's embedded runner.")
@machine_command
def run(as_json: bool, **flags: Any) -> None:
    """Run the lane specs in QUEUE_DIR/pending/, as many at once as `slots allowed` says.

    Each pass re-reads the config, asks `allowed`, logs the answer and its reason, and claims
    specs (pending/ → running/ → done/ or failed/) until that many lanes run. When the queue is
    empty and `allowed` has asked for a calibration, the storm takes the model lock
    exclusively, builds a corpus (from its own lane records once they hold --min-lane-turns
    turns: whole runs with their recorded tool time, decided on runs/h; else segments of the
    specs in done/) and calibrates. Lane records and storm.log live under
    the state root, in lanes/storm-<queue>-<hash>/.

    Ctrl-C (or SIGTERM) stops cleanly: no new lane starts, running lanes stop after their turn
    in flight and go back to pending/; a turn still in flight after 5 s is cancelled, so the
    storm ends within about 10 s. A second Ctrl-C stops at once; the next run puts what was left
    in running/ where its lane record says (done/ if it had finished, else pending/).

    \b
    Examples:
      vibey-gh storm run ~/storm-queue                 # poll forever
      vibey-gh storm run ~/storm-queue --once          # until the queue is empty
      vibey-gh storm run queue --once --calibration-slots 1,1 --calibration-max-tokens 64
    """
    summary = run_storm_until_stopped(StormOptions.of_flags(**flags), collaborators())
    result = schema.as_json(summary.answer())
    if as_json:
        emit_json(result)
        return
    click.echo("\n".join(summary.lines()))
