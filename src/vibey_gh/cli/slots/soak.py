"""`vibey-gh slots soak`."""

from __future__ import annotations

from typing import Any

import click

from ...interfaces import schema
from ...slots.measurement.options import CalibrationOptions
from ...slots.soak.asked import soak_as_asked, soak_lines
from ...storm.stopping import locked_run
from ..common import collaborators, emit_json, machine_command
from ..options import calibration_flags

DEFAULT_DURATION = "10m"


@click.command()
@click.option(
    "--duration",
    default=DEFAULT_DURATION,
    show_default=True,
    help="How long to hold N: 8h, 30m, 1h30m, 90s (more than zero, at most a week).",
)
@click.option("--slots", type=int, help="N to hold (default: today's evidence's ideal N).")
@click.option("--force", is_flag=True, help="Soak an N above what the evidence supports.")
@calibration_flags("a soak request", "Discard this soak's checkpoint and start over.")
@machine_command
def soak(duration: str, slots: int | None, force: bool, as_json: bool, **flags: Any) -> None:
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
    request, outcome = soak_as_asked(
        CalibrationOptions.of_flags(**flags),
        duration,
        slots,
        force,
        collaborators(),
        locked_run("soak", "the runner is stopped and everything measured is kept"),
    )
    if outcome is None:
        return
    if as_json:
        emit_json(schema.as_json(outcome))
        return
    click.echo("\n".join(soak_lines(request, outcome)))
