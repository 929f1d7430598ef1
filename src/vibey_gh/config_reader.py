"""Typed reads of one table of the config file: each key checked for its type and range, the
keys read remembered so an unknown one is refused by name (with the closest known key)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Literal
from urllib.parse import urlsplit

from .errors import ConfigError
from .runners.llamacpp.settings import OWNED_RUNNER_ARGS
from .runners.ollama.settings import RUNNER_ENV_PREFIX

Declaration = int | Literal["measured"]


def url_problem(value: str) -> str | None:
    """What makes `value` unusable as a runner's base URL, or None: the scheme, the host and
    the port are all checked here, so no later use of the URL can fail on them."""
    if not value.isprintable() or any(c.isspace() for c in value):
        return f"{value!r} holds spaces or control characters"
    try:
        parts = urlsplit(value)
        port = parts.port
    except ValueError as exc:
        return f"{value!r}: {exc}"
    if parts.scheme not in ("http", "https"):
        return f"{value!r} is not http:// or https://"
    if not parts.hostname:
        return f"{value!r} names no host"
    if port == 0:
        return f"{value!r}: port 0 is not a port"
    if parts.query or parts.fragment or parts.username or parts.password:
        return f"{value!r} holds a query, fragment or credentials"
    return None


class TableReader:
    """Typed access to one TOML table that remembers which keys were read."""

    def __init__(self, table: Mapping[str, Any], where: str, prefix: str) -> None:
        self.table, self.where, self.prefix, self.seen = table, where, prefix, set[str]()

    def fail(self, key: str, problem: str) -> ConfigError:
        return ConfigError(f"{self.where}: {self.prefix}.{key} {problem}")

    def _get(self, key: str) -> Any:
        self.seen.add(key)
        return self.table.get(key)

    def integer(self, key: str, default: int, *, low: int, high: int) -> int:
        value = self._get(key)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(key, f"must be an integer, not {value!r}")
        if not low <= value <= high:
            raise self.fail(key, f"must be between {low} and {high}, not {value}")
        return value

    def number(self, key: str, default: float, *, low: float, high: float) -> float:
        value = self._get(key)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.fail(key, f"must be a number, not {value!r}")
        if not low <= float(value) <= high:
            raise self.fail(key, f"must be between {low} and {high}, not {value}")
        return float(value)

    def _optional_finite(self, key: str) -> float | None:
        value = self._get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.fail(key, f"must be a number, not {value!r}")
        if not math.isfinite(value):
            raise self.fail(key, f"must be a finite number, not {value}")
        return float(value)

    def optional_above(self, key: str, low: float) -> float | None:
        """A number above `low`, or None when the key is absent (the bound is off)."""
        value = self._optional_finite(key)
        if value is not None and value <= low:
            raise self.fail(key, f"must be above {low:g}, not {value:g}")
        return value

    def optional_at_least(self, key: str, low: float) -> float | None:
        value = self._optional_finite(key)
        if value is not None and value < low:
            raise self.fail(key, f"must be at least {low:g}, not {value:g}")
        return value

    def string(self, key: str, default: str) -> str:
        value = self._get(key)
        if value is None:
            return default
        if not isinstance(value, str) or not value.strip():
            raise self.fail(key, f"must be a non-empty string, not {value!r}")
        return value

    def optional_string(self, key: str) -> str | None:
        if self.table.get(key) is None:
            self.seen.add(key)
            return None
        return self.string(key, "")

    def choice(self, key: str, options: tuple[str, ...], default: str) -> str:
        value = self.string(key, default)
        if value not in options:
            raise self.fail(key, f"must be one of {', '.join(options)}, not {value!r}")
        return value

    def url(self, key: str) -> str | None:
        value = self.optional_string(key)
        if value is None:
            return None
        problem = url_problem(value)
        if problem is not None:
            raise self.fail(key, f"must be an http:// or https:// URL with a host ({problem})")
        return value.rstrip("/")

    def declaration(self, key: str) -> Declaration:
        value = self._get(key)
        if value is None:
            return 1
        if value == "measured":
            return "measured"
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise self.fail(key, f'must be 1, an integer above 1, or "measured", not {value!r}')
        return value

    def runner_args(self, key: str) -> tuple[str, ...]:
        """A list of extra llama-server arguments, none of them one the tool sets itself."""
        value = self._get(key)
        if value is None:
            return ()
        if not isinstance(value, list):
            raise self.fail(key, f"must be a list of strings, not {value!r}")
        for item in value:
            if not isinstance(item, str) or not item.strip():
                raise self.fail(key, f"must hold non-empty strings, not {item!r}")
            flag = item.split("=", 1)[0]
            if flag in OWNED_RUNNER_ARGS:
                raise self.fail(
                    key,
                    f"may not set {flag!r}: the calibration sets the model, slots, context size, "
                    "host and port itself",
                )
        return tuple(value)

    def runner_env(self, key: str) -> dict[str, str] | None:
        """A table of OLLAMA_* variables with string values."""
        value = self._get(key)
        if value is None:
            return None
        if not isinstance(value, dict):
            raise self.fail(key, f"must be a table of OLLAMA_* variables, not {value!r}")
        for name, setting in value.items():
            shown = f"{key}.{name}" if name.isprintable() else f"{key}.{name!r}"
            if not name.startswith(RUNNER_ENV_PREFIX) or not name[len(RUNNER_ENV_PREFIX) :]:
                raise self.fail(shown, "is not an OLLAMA_* variable")
            if not isinstance(setting, str):
                raise self.fail(shown, f"must be a string, not {setting!r}")
        return dict(value)

    def reject_unknown(self, extra: set[str] | None = None) -> None:
        known = self.seen | (extra or set())
        unknown = set(self.table) - known
        if unknown:
            key = sorted(unknown)[0]
            hint = did_you_mean(key, sorted(known))
            raise self.fail(key if key.isprintable() else repr(key), f"is not a known key{hint}")


def did_you_mean(word: str, choices: Sequence[str]) -> str:
    """' (did you mean "x"?)' for the closest choice to a misspelled word, else ''."""
    import difflib  # lazy: only on a mistake, and every `slots allowed` reads the config

    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return f' (did you mean "{close[0]}"?)' if close else ""
