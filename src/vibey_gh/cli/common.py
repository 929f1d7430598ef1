"""What every command shares: error translation at the edge, JSON output, the console."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar, cast

import click

from ..config import MAX_WINDOW, MIN_WINDOW
from ..errors import VibeyError
from .edge import error_line, json_text

if TYPE_CHECKING:
    from rich.console import Console

F = TypeVar("F", bound=Callable[..., Any])


class CliError(click.ClickException):
    """A library error on its way out: one line, the library's exit code."""

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.exit_code = exit_code  # type: ignore[misc]

    def show(self, file: Any = None) -> None:
        click.echo(f"error: {self.format_message()}", err=True)


def debug_enabled() -> bool:
    ctx = click.get_current_context(silent=True)
    root = ctx.find_root() if ctx else None
    return bool(root and root.obj and root.obj.get("debug"))


def library_errors(func: F) -> F:
    """Turn VibeyError (and OS errors the library let through) into one-line CLI errors."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except (OSError, VibeyError) as exc:
            reported = error_line(exc)
            if reported is None or debug_enabled():
                raise
            raise CliError(*reported) from None

    return cast(F, wrapper)


def injected_platform() -> str | None:
    """The platform name tests hand in as `obj={"platform": ...}`; None means this machine's."""
    ctx = click.get_current_context(silent=True)
    root = ctx.find_root() if ctx else None
    injected = (root.obj or {}).get("platform") if root else None
    return injected if isinstance(injected, str) else None


def supported_platform_only(func: F) -> F:
    """Refuse in one line (exit 1) on an OS the tool does not run on, before anything else.

    For commands that lock, start runners or probe the machine: on such an OS they would fail
    half-way or record a fingerprint of unknowns. Goes under `library_errors`.
    """

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from ..platforms.support import require_supported_platform

        require_supported_platform(injected_platform())
        return func(*args, **kwargs)

    return cast(F, wrapper)


def emit_json(data: Any) -> None:
    click.echo(json_text(data))


def stderr_console() -> Console:
    from rich.console import Console

    return Console(stderr=True, highlight=False)


def stdout_is_terminal() -> bool:
    return sys.stdout.isatty()


json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")


def window_option(help_text: str) -> Callable[[F], F]:
    """`--window N`: one range for every command, the one the config accepts."""
    return click.option("--window", type=click.IntRange(MIN_WINDOW, MAX_WINDOW), help=help_text)
