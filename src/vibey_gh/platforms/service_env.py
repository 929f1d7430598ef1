"""The environment the production Ollama gets from its service manager, without starting it.

The macOS app inherits variables set with `launchctl setenv` (read back one at a time with
`launchctl getenv NAME`, which prints the value, or nothing for an unset one); the Linux
install runs `ollama serve` from a systemd unit (`ollama`; the Ollama kind names it), whose
`Environment=` lines (unit file and drop-ins together) `systemctl show UNIT -p Environment`
prints on one line:

    Environment=PATH=/usr/bin OLLAMA_HOST=0.0.0.0:11434 "OLLAMA_X=a b"

An entry holding a space is quoted, as a shell would. The shell's own environment is never
read here: it is not what the app or the unit runs with.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable
from typing import TYPE_CHECKING

import msgspec
from msgspec import field

from .process.commands import SubprocessCommandRunner, format_argv, read_output
from .support import this_platform

if TYPE_CHECKING:
    from ..interfaces.slots_interface import CommandRunner


class ServiceEnvironment(msgspec.Struct, frozen=True):
    """Variables production runs with (only those asked for and set), where they were read,
    and why nothing could be read (None when the reading worked, even if nothing is set)."""

    values: dict[str, str] = field(default_factory=dict)
    source: str = ""
    missing: str | None = None


def parse_systemd_environment(text: str) -> dict[str, str]:
    """NAME -> value of `systemctl show -p Environment` output (later entries win, as in
    systemd); ValueError when the quoting is broken."""
    values: dict[str, str] = {}
    for line in text.splitlines():
        key, separator, rest = line.partition("=")
        if not separator or key.strip() != "Environment":
            continue
        for entry in shlex.split(rest):
            name, equals, value = entry.partition("=")
            if equals and name:
                values[name] = value
    return values


def launchctl_environment(run: CommandRunner, names: Iterable[str]) -> ServiceEnvironment:
    values: dict[str, str] = {}
    for name in names:
        argv = ("launchctl", "getenv", name)
        out, why = read_output(run, argv)
        if out is None:
            return ServiceEnvironment(source="launchctl getenv", missing=why)
        value = out.strip("\n")
        if value:
            values[name] = value
    return ServiceEnvironment(values, "launchctl getenv")


def systemd_environment(run: CommandRunner, names: Iterable[str], unit: str) -> ServiceEnvironment:
    argv = ("systemctl", "show", unit, "-p", "Environment")
    source = format_argv(argv)
    out, why = read_output(run, argv)
    if out is None:
        return ServiceEnvironment(source=source, missing=why)
    try:
        found = parse_systemd_environment(out)
    except ValueError as exc:
        return ServiceEnvironment(source=source, missing=f"`{source}` printed {exc}")
    wanted = set(names)
    return ServiceEnvironment({k: v for k, v in found.items() if k in wanted}, source)


def service_environment(
    platform: str, run: CommandRunner, names: Iterable[str], unit: str
) -> ServiceEnvironment:
    """The named variables of the production Ollama on `platform` ("darwin", "linux"; `unit`:
    its systemd unit)."""
    if platform == "darwin":
        return launchctl_environment(run, names)
    if platform == "linux":
        return systemd_environment(run, names, unit)
    return ServiceEnvironment(missing=f"unsupported platform: {platform}")


def service_environment_here(
    names: Iterable[str], unit: str, timeout_s: float = 5.0
) -> ServiceEnvironment:
    """The named variables of this machine's production Ollama."""
    run = SubprocessCommandRunner(timeout_s=timeout_s)
    return service_environment(this_platform(), run, names, unit)
