"""The project's own exception types.

Adapters translate what they meet (HTTP errors, OS errors, parse errors) into these at their
boundary; only the CLI edge turns them into messages and exit codes, as `error_line` words
them.
"""

from __future__ import annotations


class VibeyError(Exception):
    """Base of every error the library raises on purpose. `exit_code` is what the CLI returns."""

    exit_code = 1


class BadInput(VibeyError):
    """The user gave something unusable: a bad config, file, option or corpus (exit 2)."""

    exit_code = 2


class ConfigError(BadInput):
    """`[local_models]` is malformed; the message names the key and the file."""


class Refused(VibeyError):
    """The tool declines to act now (production busy, lock held, port taken) (exit 1)."""


class RunnerError(VibeyError):
    """A runner could not be started, reached or stopped."""


class RunnerNotFound(BadInput):
    """The runner binary or model named in the config does not exist (exit 2)."""


class EvidenceError(VibeyError):
    """An evidence, progress or request file is unreadable or has the wrong schema."""


class MalformedJson(EvidenceError, ValueError):
    """A field of a JSON document is missing or of the wrong type. The message names the
    field by its JSON path (`evidence.steps[3].turns[12].result.finish_reason: expected a
    string, got 3`); readers add the outer parts of the path as the error passes out through
    them (`interfaces.json_fields.within`)."""

    def __init__(
        self, problem: str, path: tuple[str | int, ...] = (), source: str | None = None
    ) -> None:
        self.problem = problem
        self.path = path
        self.source = source
        where = f"{json_path(path)}: {problem}" if path else problem
        super().__init__(f"{source} is malformed: {where}" if source else where)

    def under(self, *outer: str | int) -> MalformedJson:
        """The same problem, seen from the object that holds this field at `outer`."""
        return MalformedJson(self.problem, (*outer, *self.path), self.source)

    def in_file(self, source: str) -> MalformedJson:
        """The same problem, naming the file (or document) that holds it."""
        return MalformedJson(self.problem, self.path, source)


def json_path(parts: tuple[str | int, ...]) -> str:
    """`("evidence", "steps", 3, "slots")` as `evidence.steps[3].slots`."""
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


def error_line(exc: BaseException) -> tuple[str, int] | None:
    """The one-line message and exit code for an error the CLI reports, else None.

    Library errors carry their own exit code; OS errors the library let through exit 1 and
    name the file involved.
    """
    if isinstance(exc, VibeyError):
        return str(exc), exc.exit_code
    if isinstance(exc, OSError):
        where = f" ({exc.filename})" if exc.filename else ""
        return f"{exc.strerror or exc}{where}", 1
    return None


class UnsupportedPlatform(Refused):
    """This operating system is not one the tool runs on (macOS, Linux) (exit 1)."""
