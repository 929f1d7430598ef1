"""Hypothesis strategies for the input files, a tiny TOML writer, and the one check every fuzz
test makes: no traceback, a one-line error with exit 2 (or success), the file unchanged."""

from __future__ import annotations

import contextlib
import json
import math
import re
import traceback
from collections.abc import Sequence
from typing import Any

from click.testing import CliRunner, Result
from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument
from stress_support import one_line_error

from vibey_gh.cli.main import cli

# Deterministic runs (the same examples every time) that may use function-scoped fixtures:
# the property holds for every example, so sharing a temp dir between them is fine.
FUZZ = settings(
    max_examples=100,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+\Z")

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=30),
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
toml_scalars = st.one_of(
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=30),
)
toml_values = st.recursive(
    toml_scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)


def toml_key(key: str) -> str:
    return key if _BARE_KEY.match(key) else json.dumps(key, ensure_ascii=False)


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        inner = ", ".join(f"{toml_key(k)} = {toml_value(v)}" for k, v in value.items())
        return "{" + inner + "}"
    raise TypeError(f"no TOML for {value!r}")


def toml_document(tables: dict[str, dict[str, Any]], top: dict[str, Any] | None = None) -> str:
    """Top-level keys first, then one [table] section per entry ("a.b" names a sub-table)."""
    lines = [f"{toml_key(k)} = {toml_value(v)}" for k, v in (top or {}).items()]
    for name, table in tables.items():
        lines.append("[" + ".".join(toml_key(part) for part in name.split(".")) + "]")
        lines.extend(f"{toml_key(k)} = {toml_value(v)}" for k, v in table.items())
    return "\n".join(lines) + "\n"


def mutations_of(
    document: Any, max_depth: int = 99, skip: tuple[str, ...] = ()
) -> st.SearchStrategy[Any]:
    """`document` with one value at most `max_depth` levels down replaced by a random JSON
    value, or one key removed. The root itself is never replaced (readers get an object), and
    nothing under a top-level key in `skip` is touched."""
    paths = [
        path for path in _paths(document, ()) if 0 < len(path) <= max_depth and path[0] not in skip
    ]

    def apply(choice: tuple[tuple[Any, ...], str, Any]) -> Any:
        path, how, value = choice
        copy = json.loads(json.dumps(document))
        parent = copy
        for part in path[:-1]:
            parent = parent[part]
        if how == "drop" and isinstance(parent, dict):
            del parent[path[-1]]
        else:
            parent[path[-1]] = value
        return copy

    return st.tuples(st.sampled_from(paths), st.sampled_from(["replace", "drop"]), json_values).map(
        apply
    )


def _paths(node: Any, prefix: tuple[Any, ...]) -> Any:
    yield prefix
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node[:3]):
            yield from _paths(value, (*prefix, index))


def invoke(args: Sequence[str]) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=True)


def assert_clean_outcome(
    result: Result,
    *,
    ok_codes: tuple[int, ...] = (0,),
    error_codes: tuple[int, ...] = (2,),
    alone: bool = True,
) -> None:
    """An exit in `ok_codes`, or one in `error_codes` with exactly one `error:` line on stderr
    (the only line when `alone`) — never a traceback."""
    with contextlib.suppress(InvalidArgument):  # event() only counts inside a @given test
        event(f"exit {result.exit_code}")
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        assert result.exc_info is not None
        shown = "".join(traceback.format_exception(*result.exc_info))
        raise AssertionError(f"traceback instead of a one-line error:\n{shown}")
    if result.exit_code in ok_codes:
        return
    assert result.exit_code in error_codes, (result.exit_code, result.stderr)
    one_line_error(result.stderr, alone=alone)
