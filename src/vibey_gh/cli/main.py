"""`vibey-gh`: the command groups. Each command lives in its own module, imported only when it
runs, so a quick command (`slots allowed`, asked on every storm pass) pays for nothing else."""

from __future__ import annotations

import importlib
from typing import Any

import click

from .. import __version__
from ..composition import Collaborators, real_collaborators
from ..config import choose_config_file
from .common import CliState


class LazyGroup(click.Group):
    """A group whose commands are `module:function` names, imported on first use."""

    def __init__(self, *args: Any, lazy: dict[str, str] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy = lazy or {}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.lazy:
            module_name, attribute = self.lazy[cmd_name].split(":")
            module = importlib.import_module(f"{__package__}.{module_name}")
            command = getattr(module, attribute)
            assert isinstance(command, click.Command)
            return command
        return super().get_command(ctx, cmd_name)


@click.group(
    cls=LazyGroup,
    lazy={"doctor": "doctor:doctor"},
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.option("--debug", is_flag=True, help="Show tracebacks instead of one-line errors.")
@click.option(
    "--config",
    "config_file",
    metavar="FILE",
    help="The config file to use (as $VIBEY_GH_CONFIG; wins over ./vibey-gh.toml).",
)
@click.version_option(__version__, prog_name="vibey-gh")
@click.pass_context
def cli(ctx: click.Context, debug: bool, config_file: str | None) -> None:
    """Measure how many agent runs this machine may serve at once on a local model.

    \b
    Examples:
      vibey-gh slots calibrate --demo     a real sweep on the embedded runner
      vibey-gh slots allowed              how many runs may start now, and why
      vibey-gh doctor                     what was detected on this machine
      vibey-gh --config lab.toml slots allowed --json

    \b
    Shell completion (bash; zsh_source and fish_source for the others):
      eval "$(_VIBEY_GH_COMPLETE=bash_source vibey-gh)"
    """
    if config_file is not None:
        choose_config_file(config_file)
    # The one place the CLI's collaborators come from: those handed in as click's `obj`
    # (`cli.main(obj=collaborators)`, how the test suite's `run_cli` fixture replaces parts),
    # else the real ones, each built when a command first asks for it.
    given = ctx.obj if isinstance(ctx.obj, Collaborators) else real_collaborators()
    ctx.obj = CliState(collaborators=given, debug=debug)


@cli.group(
    cls=LazyGroup,
    lazy={
        "corpus": "slots.corpus:corpus",
        "calibrate": "slots.calibrate:calibrate",
        "soak": "slots.soak:soak",
        "allowed": "slots.allowed:allowed",
        "show": "slots.show:show",
        "apply": "slots.apply:apply",
        "compare": "slots.compare:compare",
        "forget": "slots.forget:forget",
    },
)
def slots() -> None:
    """Measure, record and obey the number of parallel runs (corpus, calibrate, allowed, ...).

    \b
    Examples:
      vibey-gh slots corpus --specs my-specs/ --window 32768 --out corpus.json
      vibey-gh slots calibrate --corpus corpus.json
      vibey-gh slots allowed --json
      vibey-gh slots show --html report.html
      vibey-gh slots compare f99b07f610204948 0c1d2e3f40516273
    """


@cli.group(name="runner", cls=LazyGroup, lazy={"serve": "runner:serve"})
def runner_group() -> None:
    """Run a model server yourself (the embedded llama.cpp runner and friends).

    \b
    Examples:
      vibey-gh runner serve --runner embedded --slots 2 --window 4096 --port 8080
    """


@cli.group(name="lane", cls=LazyGroup, lazy={"run": "lane:run"})
def lane_group() -> None:
    """One agent run against the production runner, with durable records.

    \b
    Examples:
      vibey-gh lane run specs/state-layout.toml
    """


@cli.group(name="storm", cls=LazyGroup, lazy={"run": "storm:run"})
def storm_group() -> None:
    """A queue of lanes that obeys `slots allowed` and calibrates when idle.

    \b
    Examples:
      vibey-gh storm run queue/ --once
    """


if __name__ == "__main__":  # `python -m vibey_gh.cli.main`, as the tests run it
    cli(prog_name="vibey-gh")
