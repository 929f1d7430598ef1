"""`vibey-gh slots calibrate`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ...interfaces import schema
from ...slots.measurement import options as asked
from ...storm.stopping import locked_run
from ..common import collaborators, emit_json, machine_command
from ..options import calibration_flags

MAX_SLOTS = 256


@click.command()
@calibration_flags(
    "a calibration request",
    "Discard this device and corpus's checkpoint (measured with other options) and start the "
    "sweep over.",
)
@click.option("--slots", "slots_text", help="Explicit steps, e.g. 1,1,2,4 (default 1,1,2,3,…).")
@click.option("--max-runs", type=click.IntRange(1), help="Stop after this many new steps.")
@click.option("--max-slots", type=click.IntRange(1, MAX_SLOTS), help="Largest N to try.")
@click.option("--out", "out_dir", type=click.Path(path_type=Path), help="Also write evidence here.")
@click.option(
    "--min-step-seconds",
    type=float,
    help="Measure each step at least this long, an interleaved one at least half of it where "
    "sixteen of its blocks fit in that half (default: config, 60; demo 20).",
)
@click.option(
    "--max-step-seconds",
    type=float,
    help="Measure an inconclusive step, or a one-slot run whose interval is still wider than "
    "half of min_gain, at most this long (default: 5 × the minimum; 40 × with a latency "
    "bound set).",
)
@click.option(
    "--interleave-seconds",
    type=float,
    help="Serve each step above one slot in blocks this long, one turn at a time and all its "
    "slots at a time in turn (1, N, N, 1, …), so its gain is read against one slot at the "
    "same minutes; blocks of several turns each, twenty in a step's cap (default: config, off; "
    "the demo's 7 s); 0 turns it off.",
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
@machine_command
def calibrate(as_json: bool, **flags: Any) -> None:
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
      vibey-gh slots calibrate --corpus corpus.json --interleave-seconds 15
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
    options = asked.CalibrationOptions.of_sweep_flags(**flags)
    answer = asked.calibrate_as_asked(
        options,
        collaborators(),
        locked_run("calibration", "the runner is stopped and every completed step is kept"),
        lambda text: click.echo(text, err=True),
    )
    if answer is None:
        return
    if as_json:
        emit_json(schema.as_json(answer.output()))
        return
    not_recorded = answer.not_recorded()
    if not_recorded is not None:
        click.echo(not_recorded, err=True)
    click.echo("\n".join(answer.lines(options.most_slots)))
