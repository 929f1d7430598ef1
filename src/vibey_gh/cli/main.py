"""`vibey-gh`: the command groups. Each command lives in its own module."""

from __future__ import annotations

import click

from .. import __version__
from . import allowed, apply, calibrate, corpus, doctor, lane, runner, show, storm


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--debug", is_flag=True, help="Show tracebacks instead of one-line errors.")
@click.version_option(__version__, prog_name="vibey-gh")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """Measure how many agent runs this machine may serve at once on a local model.

    \b
    Examples:
      vibey-gh slots calibrate --demo     a real sweep on the embedded runner
      vibey-gh slots allowed              how many runs may start now, and why
      vibey-gh doctor                     what was detected on this machine
    """
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug


@cli.group()
def slots() -> None:
    """Measure, record and obey the number of parallel runs (corpus, calibrate, allowed, ...)."""


@cli.group(name="runner")
def runner_group() -> None:
    """Run a model server yourself (the embedded llama.cpp runner and friends)."""


@cli.group(name="lane")
def lane_group() -> None:
    """One agent run against the production runner, with durable records."""


@cli.group(name="storm")
def storm_group() -> None:
    """A queue of lanes that obeys `slots allowed` and calibrates when idle."""


slots.add_command(corpus.corpus)
slots.add_command(calibrate.calibrate)
slots.add_command(allowed.allowed)
slots.add_command(show.show)
slots.add_command(apply.apply)
runner_group.add_command(runner.serve)
lane_group.add_command(lane.run)
storm_group.add_command(storm.run)
cli.add_command(doctor.doctor)


def main() -> None:
    cli(prog_name="vibey-gh")


if __name__ == "__main__":
    main()
