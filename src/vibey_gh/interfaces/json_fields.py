"""Typed reads of single JSON fields, for what is not a declared record: formats written by
other tools (session logs, traces) and the few documents read field by field (the evidence's
top level, which keeps keys it does not name). A record this tool writes is declared once and
read whole with `interfaces.schema.checked`; both raise one `MalformedJson` naming the field
by its JSON path, so a damaged file becomes one clear line, never a crash inside the judge.

Each read names its own key; `within` (and `each`) add the outer parts of the path as the
error passes out, so a reader several levels down need not know where it stands:

    with within("evidence"):
        verdicts = each(data, "verdicts", read_verdict)
    # evidence.verdicts[3].label: expected a string, got 3

Reads take any value (`object`: what `json.loads` returned) and return the type they checked:
`integer(data, "n")` is an int, `integer(data, "n", None)` an int or None, `integer(data, "n",
4)` an int. The JSON a reader hands on (`items`, `mapping`) is `list[object]` and
`dict[str, object]`, to be read on through these functions.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Generic, TypeVar, cast, overload

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


def _scalar(
    data: object, key: str, default: object, fits: Callable[[object], bool], wanted: str
) -> object:
    """The value at `key` when `fits` says it is of its kind (None where `default` is None and
    it is null or absent); MalformedJson saying what was `wanted` otherwise."""
    value = _get(data, key, default)
    if value is None and default is None:
        return None
    if not fits(value):
        raise MalformedJson(f"expected {wanted}, got {_shown(value)}", (key,))
    return value


class ScalarRead(Generic[T]):
    """A typed read of one scalar field: `read(data, key)` is a T (the field must be there),
    `read(data, key, default)` a T or `default` where the field is absent (or null, when the
    default is None). `convert`: what the checked value is handed on as (None: itself)."""

    def __init__(
        self,
        fits: Callable[[object], bool],
        wanted: str,
        convert: Callable[[object], T] | None = None,
    ) -> None:
        self.fits, self.wanted, self.convert = fits, wanted, convert

    @overload
    def __call__(self, data: object, key: str, default: Required = ...) -> T: ...
    @overload
    def __call__(self, data: object, key: str, default: D) -> T | D: ...
    def __call__(self, data: object, key: str, default: object = _REQUIRED) -> object:
        value = _scalar(data, key, default, self.fits, self.wanted)
        return value if value is None or self.convert is None else self.convert(value)


integer = ScalarRead[int](_is_integer, "a whole number")
number = ScalarRead[float](_is_number, "a number", lambda value: float(cast(float, value)))
text = ScalarRead[str](lambda value: isinstance(value, str), "a string")
boolean = ScalarRead[bool](lambda value: isinstance(value, bool), "true or false")


def items(data: object, key: str, default: Required | None = None) -> list[object]:
    """A list; absent or null reads as [] unless `default` is `REQUIRED`."""
    value = _get(data, key, default)
    if value is None:
        return []
    if not isinstance(value, list):
        raise MalformedJson(f"expected a list, got {_shown(value)}", (key,))
    return value


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
