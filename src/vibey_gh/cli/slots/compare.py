"""`vibey-gh slots compare`."""

from __future__ import annotations

from pathlib import Path

import click

from ...config import load_config
from ...interfaces import schema
from ...platforms.storage.system_paths import check_new_output_file
from ...slots.report.compare import compare as compare_sweeps
from ...slots.report.compare import write_overlaid_throughput
from ..common import collaborators, emit_json, json_command


@click.command()
@click.argument("sweeps", nargs=-1, required=True)
@click.option(
    "--plot",
    "plot_path",
    type=click.Path(path_type=Path),
    help="Also write one PNG with every sweep's throughput overlaid.",
)
@json_command
def compare(sweeps: tuple[str, ...], plot_path: Path | None, as_json: bool) -> None:
    """Two or more sweeps side by side: steps, decisions, fingerprint differences.

    Each SWEEP is a fingerprint (its evidence in the state dir) or an evidence file (one that
    `slots calibrate --out` wrote, or a colleague sent). Every sweep is re-judged against
    today's bounds. Good for two devices, two windows, or before and after an upgrade.
    The throughput compared is the figure the sweeps were decided on: runs/h when every sweep
    replayed whole runs, turns/h for segments; sweeps decided on different figures are
    compared on turns/h, which every sweep measured, and the output says so.
    An unknown fingerprint or a damaged file is bad input (exit 2), and so is a --plot path in
    /proc, /sys or /dev or one that exists and is not a regular file (refused first).

    \b
    Examples:
      vibey-gh slots compare f99b07f610204948 0c1d2e3f40516273
      vibey-gh slots compare before/slots-f99b.json after/slots-0c1d.json --plot both.png
      vibey-gh slots compare f99b07f610204948 laptop.json --json
    """
    if plot_path is not None:
        check_new_output_file(plot_path, "--plot")
    comparison = compare_sweeps(list(sweeps), collaborators().layout(), load_config().bounds)
    plotted = write_overlaid_throughput(comparison, plot_path) if plot_path else None
    if as_json:
        emit_json(
            {**schema.as_json(comparison.output()), "plot": str(plotted) if plotted else None}
        )
        return
    click.echo("\n".join(comparison.lines()))
    if plotted is not None:
        click.echo(f"plot: {plotted}")
