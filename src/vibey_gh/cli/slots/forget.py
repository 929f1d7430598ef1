"""`vibey-gh slots forget`: remove what a calibration left behind and will not use."""

from __future__ import annotations

import click

from ...errors import BadInput
from ...interfaces import schema
from ...slots.evidence.checkpoints import forget_checkpoints
from ...storm.lock import model_lock
from ..common import collaborators, emit_json, json_command


@click.command()
@click.option(
    "--checkpoints",
    is_flag=True,
    help="Remove the checkpoints of paused sweeps (progress/*.json under the state folder).",
)
@click.option(
    "--fingerprint",
    metavar="FP",
    help="Only the checkpoints of this fingerprint (as `doctor` lists them).",
)
@json_command
def forget(checkpoints: bool, fingerprint: str | None, as_json: bool) -> None:
    """Remove the checkpoints of paused sweeps: the completed steps a rerun of
    `slots calibrate` would resume. `vibey-gh doctor` lists them, with those today's
    fingerprint cannot resume marked orphaned. Evidence is never removed. Refused while a
    calibration runs (it holds the model lock), and when the progress folder is a link: only
    files inside the state folder that read back as checkpoints are removed; anything else
    there is left in place and listed.

    \b
    Examples:
      vibey-gh slots forget --checkpoints
      vibey-gh slots forget --checkpoints --fingerprint f99b07f610204948
    """
    if not checkpoints:
        raise BadInput("say what to forget: --checkpoints")
    layout = collaborators().layout()
    with model_lock(layout, exclusive=True, wait=False, role="slots forget"):
        forgotten = forget_checkpoints(layout, fingerprint)
    if as_json:
        emit_json(schema.as_json(forgotten))
        return
    click.echo("\n".join(forgotten.lines()))


__all__ = ["forget"]
