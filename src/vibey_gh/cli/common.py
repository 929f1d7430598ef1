"""What every command shares: its collaborators, error translation at the edge, JSON output."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar, cast

import click
import msgspec

from ..composition import Collaborators, real_collaborators
from ..errors import VibeyError, error_line
from ..platforms.startup import flush_stdout_quietly
from ..platforms.support import require_supported_platform
from .edge import json_text
from .options import json_option as json_option
from .options import window_option as window_option

F = TypeVar("F", bound=Callable[..., Any])


class CliError(click.ClickException):
    """A library error on its way out: one line, the library's exit code."""

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.exit_code = exit_code  # type: ignore[misc]

    def show(self, file: Any = None) -> None:
        click.echo(f"error: {self.format_message()}", err=True)


class CliState(msgspec.Struct, frozen=True):
    """What the root group hands every command (click's `obj`): the collaborators they act
    through and whether --debug was given."""

    collaborators: Collaborators
    debug: bool = False


def _cli_state() -> CliState:
    """This invocation's, as the root group chose it (`cli/main.py`); for a command run
    without the root group, the real collaborators and no --debug."""
    ctx = click.get_current_context(silent=True)
    state = ctx.find_root().obj if ctx else None
    return state if isinstance(state, CliState) else CliState(real_collaborators())


def collaborators() -> Collaborators:
    """The collaborators of this invocation."""
    return _cli_state().collaborators


def library_errors(func: F) -> F:
    """Turn VibeyError (and OS errors the library let through) into one-line CLI errors."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except BrokenPipeError:
            reader_went_away()
        except (OSError, VibeyError) as exc:
            reported = error_line(exc)
            if reported is None or _cli_state().debug:
                raise
            raise CliError(*reported) from None

    return cast(F, wrapper)


def reader_went_away() -> None:
    """The reader of stdout closed it (`vibey-gh doctor | head`): stop quietly with exit 0,
    as `head` itself does (the reader had all it wanted) and as the `slots allowed` fast path
    does, nothing more flushed to the closed pipe and no "Broken pipe" error line."""
    flush_stdout_quietly()
    raise SystemExit(0)


def supported_platform_only(func: F) -> F:
    """Refuse in one line (exit 1) on an OS the tool does not run on, before anything else.

    For commands that lock, start runners or probe the machine: on such an OS they would fail
    half-way or record a fingerprint of unknowns. Goes under `library_errors`.
    """

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        require_supported_platform(collaborators().platform)
        return func(*args, **kwargs)

    return cast(F, wrapper)


def json_command(func: F) -> F:
    """--json, and library errors as one line: how a command ends its declaration."""
    return json_option(library_errors(func))


def machine_command(func: F) -> F:
    """`json_command` for a command that locks, starts runners or probes the machine, refused
    first on an OS the tool does not run on (`supported_platform_only`)."""
    return json_command(supported_platform_only(func))


def say(text: str) -> None:
    """A line for the person at the terminal, on stderr (stdout stays the command's answer)."""
    click.echo(text, err=True)


def emit_json(data: Any) -> None:
    click.echo(json_text(data))
