"""The project's own exception types.

Adapters translate what they meet (HTTP errors, OS errors, parse errors) into these at their
boundary; only the CLI edge turns them into messages and exit codes.
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


class UnsupportedPlatform(Refused):
    """This operating system is not one the tool runs on (macOS, Linux) (exit 1)."""
