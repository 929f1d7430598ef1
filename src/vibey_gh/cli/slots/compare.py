"""`vibey-gh slots compare`."""

from __future__ import annotations

from pathlib import Path

import click

from ...errors import BadInput
from ...platforms.storage.system_paths import check_output_file
from ..common import collaborators, emit_json, json_option, library_errors


@click.command()
@click.argument("sweeps", nargs=-1, required=True)
@click.option(
    "--plot",
    "plot_path",
    type=click.Path(path_type=Path),
    help="Also write one PNG with every sweep's throughput overlaid.",
)
@json_option
@library_errors
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
    from ...config import load_config
    from ...slots.report.compare import compare as compare_sweeps
    from ...slots.report.compare import write_overlaid_throughput

    if plot_path is not None:
        check_plot_target(plot_path)
    comparison = compare_sweeps(list(sweeps), collaborators().layout(), load_config().bounds)
    plotted = write_overlaid_throughput(comparison, plot_path) if plot_path else None
    if as_json:
        emit_json({**comparison.to_json(), "plot": str(plotted) if plotted else None})
        return
    header = ["step", *(s.label for s in comparison.sweeps)]
    rows = comparison.rows()
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        click.echo("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)))
    click.echo(comparison.note[0].upper() + comparison.note[1:] + ".")
    for sweep in comparison.sweeps:
        click.echo(f"{sweep.label}: ideal {sweep.judgement.ideal} — {sweep.judgement.reason}")
    for label, differs in comparison.differences():
        first = comparison.sweeps[0].label
        click.echo(f"{label} against {first}: " + (", ".join(differs) or "same fingerprint"))
    if plotted is not None:
        click.echo(f"plot: {plotted}")


def check_plot_target(path: Path) -> None:
    check_output_file(path, "--plot")
    if not path.parent.is_dir():
        raise BadInput(f"--plot {path}: no such folder {path.parent}")
