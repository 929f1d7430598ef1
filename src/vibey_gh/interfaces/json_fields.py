"""The one reader of JSON fields: typed reads of JSON (written by this tool or handed to it),
so a damaged file fails as one `MalformedJson` that names the field by its JSON path (and
becomes one clear line), never as a crash deep inside the judge.

Each read names its own key; `within` (and `each`, `nested`) add the outer parts of the path
as the error passes out, so a reader several levels down need not know where it stands:

    with within("evidence"):
        steps = each(data, "steps", read_step)
    # evidence.steps[3].turns[12].result.finish_reason: expected a string, got 3

Reads take any value (`object`: what `json.loads` returned) and return the type they checked:
`integer(data, "n")` is an int, `integer(data, "n", None)` an int or None, `integer(data, "n",
4)` an int. The JSON a reader hands on (`items`, `mapping`) is `list[object]` and
`dict[str, object]`, to be read on through these functions.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar, overload

from ..errors import MalformedJson

T = TypeVar("T")
D = TypeVar("D")


class Required:
    """The default that means "must be present" (`REQUIRED`)."""

    def __repr__(self) -> str:
        return "REQUIRED"


# A field that must be present (the default of the scalar reads; `items`/`mapping` take it).
REQUIRED = Required()
_REQUIRED = REQUIRED


@contextmanager
def within(*path: str | int) -> Iterator[None]:
    """Reads inside this block name their fields below `path`."""
    try:
        yield
    except MalformedJson as exc:
        raise exc.under(*path) from None


def _shown(value: object) -> str:
    return f"{value!r:.40}"


def _get(data: object, key: str, default: object) -> object:
    if not isinstance(data, dict):
        raise MalformedJson(f"expected an object holding {key!r}, got {_shown(data)}")
    if key not in data:
        if default is _REQUIRED:
            raise MalformedJson("missing", (key,))
        return default
    value: object = data[key]
    return value


def an_object(data: object, first_key: str) -> dict[str, object]:
    """`data` as a JSON object, refused as a read of `first_key` would refuse it."""
    if not isinstance(data, dict):
        raise MalformedJson(f"expected an object holding {first_key!r}, got {_shown(data)}")
    return data


def _is_integer(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


@overload
def integer(data: object, key: str, default: Required = ...) -> int: ...
@overload
def integer(data: object, key: str, default: D) -> int | D: ...
def integer(data: object, key: str, default: object = _REQUIRED) -> object:
    value = _get(data, key, default)
    if value is None and default is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool):
        raise MalformedJson(f"expected a whole number, got {_shown(value)}", (key,))
    return value


@overload
def number(data: object, key: str, default: Required = ...) -> float: ...
@overload
def number(data: object, key: str, default: D) -> float | D: ...
def number(data: object, key: str, default: object = _REQUIRED) -> object:
    value = _get(data, key, default)
    if value is None and default is None:
        return None
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise MalformedJson(f"expected a number, got {_shown(value)}", (key,))
    return float(value)


@overload
def text(data: object, key: str, default: Required = ...) -> str: ...
@overload
def text(data: object, key: str, default: D) -> str | D: ...
def text(data: object, key: str, default: object = _REQUIRED) -> object:
    value = _get(data, key, default)
    if value is None and default is None:
        return None
    if not isinstance(value, str):
        raise MalformedJson(f"expected a string, got {_shown(value)}", (key,))
    return value


@overload
def boolean(data: object, key: str, default: Required = ...) -> bool: ...
@overload
def boolean(data: object, key: str, default: D) -> bool | D: ...
def boolean(data: object, key: str, default: object = _REQUIRED) -> object:
    value = _get(data, key, default)
    if value is None and default is None:
        return None
    if not isinstance(value, bool):
        raise MalformedJson(f"expected true or false, got {_shown(value)}", (key,))
    return value


def items(data: object, key: str, default: Required | None = None) -> list[object]:
    """A list; absent or null reads as [] unless `default` is `REQUIRED`."""
    value = _get(data, key, default)
    if value is None:
        return []
    if not isinstance(value, list):
        raise MalformedJson(f"expected a list, got {_shown(value)}", (key,))
    return value


def present(data: object, key: str) -> bool:
    """Whether `data` holds `key` with a value other than null (an optional part)."""
    return isinstance(data, dict) and data.get(key) is not None


def truthy(data: object, key: str, default: bool) -> bool:
    """`key` taken as true or false the way Python reads a value (`default` when absent): for
    flags older files wrote without a fixed type."""
    return bool(data.get(key, default)) if isinstance(data, dict) else default


def strings(data: object, key: str, default: Required | None = None) -> list[str]:
    """A list of strings (as `items`); a bad item is named by its index."""
    values = items(data, key, default)
    checked: list[str] = []
    for index, value in enumerate(values):
        if not isinstance(value, str):
            raise MalformedJson(f"expected a string, got {_shown(value)}", (key, index))
        checked.append(value)
    return checked


def whole_numbers(data: object, key: str, default: Required | None = None) -> list[int]:
    """A list of whole numbers (as `items`); a bad item is named by its index."""
    values = items(data, key, default)
    checked: list[int] = []
    for index, value in enumerate(values):
        if not isinstance(value, int) or isinstance(value, bool):
            raise MalformedJson(f"expected a whole number, got {_shown(value)}", (key, index))
        checked.append(value)
    return checked


def mapping(data: object, key: str, default: Required | None = None) -> dict[str, object]:
    """An object; absent or null reads as {} unless `default` is `REQUIRED`."""
    value = _get(data, key, default)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise MalformedJson(f"expected an object, got {_shown(value)}", (key,))
    return value


def each(
    data: object, key: str, parse: Callable[[object], T], default: Required | None = None
) -> list[T]:
    """Every item of the list at `key`, parsed; a bad item is named by its index."""
    parsed = []
    # try/except rather than `within` per item: a clean read costs nothing (thousands of turns)
    for index, item in enumerate(items(data, key, default)):
        try:
            parsed.append(parse(item))
        except MalformedJson as exc:
            raise exc.under(key, index) from None
    return parsed


def nested(data: object, key: str, parse: Callable[[dict[str, object]], T]) -> T:
    """The object at `key` (required), parsed, its fields named below `key`."""
    value = mapping(data, key, REQUIRED)
    try:
        return parse(value)
    except MalformedJson as exc:
        raise exc.under(key) from None


def optional_numbers(values: object, what: str) -> tuple[float | int | None, ...]:
    """A list of numbers or nulls, such as a timeline point; `what` names it where it has no
    key of its own."""
    if not isinstance(values, list):
        raise MalformedJson(f"{what}: expected a list, got {_shown(values)}")
    checked: list[float | int | None] = []
    for index, value in enumerate(values):
        if value is not None and (not isinstance(value, int | float) or isinstance(value, bool)):
            raise MalformedJson(f"expected a number, got {_shown(value)}", (index,))
        checked.append(value)
    return tuple(checked)


def typed(data: object, key: str, kind: type[T]) -> T:
    """A required field of one JSON type (str, int, float, bool, list, dict)."""
    readers: dict[type, Callable[[object, str], object]] = {
        str: text,
        int: integer,
        float: number,
        bool: boolean,
        list: lambda d, k: items(d, k, REQUIRED),
        dict: lambda d, k: mapping(d, k, REQUIRED),
    }
    value = readers[kind](data, key)
    if not isinstance(value, kind):  # each reader returns its own kind: never taken
        raise MalformedJson(f"expected {kind.__name__}, got {_shown(value)}", (key,))
    return value
