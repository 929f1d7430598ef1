"""`vibey-gh slots apply`."""

from __future__ import annotations

import click

from ...config import load_config
from ...interfaces import schema
from ...slots.gate.apply import describe_plan, outcome_line, perform_apply, plan_apply
from ..common import collaborators, emit_json, machine_command, window_option


@click.command()
@click.option(
    "--slots",
    type=click.IntRange(1, 256),
    help="Slots to give the runner (default: what `slots allowed` answers now).",
)
@window_option("Tokens per slot (default: [local_models] window).")
@click.option("--yes", is_flag=True, help="Do it. Without --yes, only print what would be done.")
@click.option("--force", is_flag=True, help="Apply a --slots above what `slots allowed` answers.")
@machine_command
def apply(
    slots: int | None,
    window: int | None,
    yes: bool,
    force: bool,
    as_json: bool,
) -> None:
    """Set the production runner's slots and window to the answer (dry run unless --yes).

    The number of slots is --slots, else what `slots allowed` answers now; the window is
    --window, else the configured one. A --slots above what `slots allowed` answers is refused
    (exit 1), saying what the evidence supports, unless --force.

    Ollama on macOS: launchctl setenv OLLAMA_NUM_PARALLEL and OLLAMA_CONTEXT_LENGTH, then quit
    and reopen the app. Ollama under systemd: a drop-in with
    Environment= lines, daemon-reload, restart. The embedded runner and llama-server are not
    restarted by this tool: it prints the command to restart them with.

    What was measured is what is restored: when the number comes from evidence, production
    gets the settings that evidence was measured with — llama-server's runner_args in its
    restart command, Ollama's capacity variables (runner_env) beside the two above. A
    production variable the evidence was not measured with cannot be taken away, so apply
    refuses it (exit 1), naming it.

    Every action is printed exactly (commands, and files with their content) before anything
    happens; nothing happens without --yes. Restarting a runner fails the requests it is serving.

    \b
    Examples:
      vibey-gh slots apply                          what would be done for the allowed N
      vibey-gh slots apply --slots 2 --window 32768
      sudo vibey-gh slots apply --slots 2 --yes     Linux: write the drop-in, restart Ollama
      vibey-gh slots apply --slots 4 --force        past the evidence, on purpose
      vibey-gh slots apply --json
    """
    config = load_config()
    parts = collaborators()
    plan, parallelism = plan_apply(
        config, parts.probes(), slots=slots, window=window, decide=parts.decide_allowed, force=force
    )
    if not as_json:
        for line in describe_plan(plan):
            click.echo(line)
    performed = perform_apply(plan, parallelism) if yes else None
    if as_json:
        emit_json(schema.as_json(plan.answer_of(performed)))
    else:
        click.echo(outcome_line(plan, performed))
