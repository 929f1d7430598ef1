"""Records declared once, and what is derived from the declaration.

A record read from disk or config is a `msgspec.Struct` (or a TypedDict for an open JSON
section) whose fields each say their name, type, default, range (`Meta(ge=…, le=…, gt=…)`) and
meaning (`Meta(description=…)`) in one place:

    class Bounds(msgspec.Struct, frozen=True):
        min_gain: Annotated[float, Meta(ge=0.0, le=100.0, description="…")] = 0.10

From that one declaration:

* `checked` reads parsed JSON (what the bounded reader, `guarded.py`, returned: its size,
  nesting and non-finite numbers already refused) as the record, every type and range checked
  in C, and raises the project's `MalformedJson` naming the failing field's path;
* `config.read_table` reads a config table as the record: unknown keys refused with the
  closest known one, non-finite numbers refused, and a bad value's message worded from its
  declared range ("must be between 0.01 and 1.0, not 2");
* `meanings` lists each field's meaning, for the report's tables;
* `as_json` writes it (in declared order; a record declared `omit_defaults` leaves out a
  field at its default, as files written before the field were).

`msgspec.inspect` is read only on a mistake or for a report, never on `slots allowed`'s path.
"""

from __future__ import annotations

import math
import re
from pathlib import PurePath
from typing import Any, TypeVar, cast

import msgspec
import msgspec.inspect

from ..errors import MalformedJson
from .json_fields import REQUIRED

T = TypeVar("T")

# msgspec's words for where a value failed: "… - at `$.steps[3].slots`"
_AT = re.compile(r"^(?P<problem>.*?)(?: - at `\$(?P<path>[^`]*)`)?$", re.DOTALL)
_PART = re.compile(r"\.([^.\[]+)|\[(\d+|\.\.\.)\]")


def error_path(exc: msgspec.ValidationError) -> tuple[str, tuple[str | int, ...]]:
    """msgspec's message as (the problem, the failing field's path as `MalformedJson` holds it)."""
    found = _AT.match(str(exc))
    assert found is not None  # the pattern matches any text
    path: list[str | int] = []
    for key, index in _PART.findall(found["path"] or ""):
        path.append(key if key else ("…" if index == "..." else int(index)))
    problem = found["problem"]
    return problem[:1].lower() + problem[1:], tuple(path)


def checked(value: object, schema: type[T]) -> T:
    """Parsed JSON as `schema`, every declared type and range checked (unknown keys ignored:
    a newer file may hold more); MalformedJson names the failing field, in the words of
    `interfaces.json_fields` ("expected a whole number, got 2.5")."""
    try:
        return msgspec.convert(value, schema, strict=True)
    except msgspec.ValidationError as exc:
        raise _malformed(exc, value) from None


def checked_at(data: object, key: str, schema: type[T], default: object = None) -> T:
    """The value at `key` of a JSON object as `schema` (`checked`), a bad field named below
    `key`; absent, it is read as `default` (`json_fields.REQUIRED`: refused as missing)."""
    if not isinstance(data, dict):
        raise MalformedJson(f"expected an object holding {key!r}, got {data!r:.40}")
    if key not in data and default is REQUIRED:
        raise MalformedJson("missing", (key,))
    try:
        return checked(data.get(key, default), schema)
    except MalformedJson as exc:
        raise exc.under(key) from None


# msgspec's names of JSON types, in the words of `json_fields`
_WORDS = {
    "int": "a whole number",
    "float": "a number",
    "str": "a string",
    "bool": "true or false",
    "array": "a list",
    "object": "an object",
}
_EXPECTED = re.compile(r"^expected `(?P<kinds>[^`]*)`(?P<range>[^,]*)(?:, got `(?P<got>[^`]*)`)?$")
_JSON_NAMES = {
    bool: "bool",
    int: "int",
    float: "float",
    str: "str",
    list: "array",
    dict: "object",
    type(None): "null",
}
_ABSENT = object()
_MISSING = re.compile(r"^object missing required field `(?P<name>[^`]*)`$")


def _malformed(exc: msgspec.ValidationError, document: object) -> MalformedJson:
    """msgspec's "expected `int`, got `float` - at `$.patience`" as MalformedJson at
    ("patience",): "expected a whole number, got 2.5". A value of an object of any keys
    (msgspec says `[...]`) is named by the first key whose value is of the refused type."""
    problem, at = error_path(exc)
    found = _EXPECTED.match(problem)
    got = found["got"] if found else None
    path: list[str | int] = []
    value = document
    for part in at:
        if part == "…" and isinstance(value, dict):
            part = next((k for k, v in value.items() if _JSON_NAMES.get(type(v)) == got), part)
        path.append(part)
        try:
            value = cast(Any, value)[part]  # a dict or list, as the path says
        except (KeyError, IndexError, TypeError):
            value = _ABSENT
    if missing := _MISSING.match(problem):  # named at the field, as a reader of it would
        return MalformedJson("missing", (*path, missing["name"]))
    if found is None or value is _ABSENT:
        return MalformedJson(problem, tuple(path))
    # of several kinds, a list or object is named: the other (a word, a number) is its short form
    named = found["kinds"].split(" | ")
    kinds = sorted(  # a whole number or any number is "a number"
        (kind for kind in named if kind != "null" and not (kind == "int" and "float" in named)),
        key=lambda kind: kind not in ("array", "object"),
    )
    wanted = _WORDS.get(kinds[0], kinds[0]) if kinds else "null"
    return MalformedJson(f"expected {wanted}{found['range']}, got {value!r:.40}", tuple(path))


def as_json(record: object, schema_version: int | None = None) -> dict[str, Any]:
    """A declared record as the JSON object it is written as: each field in declared order
    (None included, unless the record is declared `omit_defaults`: then a field at its
    default is left out, as older files were written), after its file's schema version when
    it has one."""
    fields: dict[str, Any] = _lists(msgspec.to_builtins(record, enc_hook=_written))
    return fields if schema_version is None else {"schema_version": schema_version, **fields}


def _lists(value: Any) -> Any:
    """`to_builtins`'s output with its tuples as lists, as the record reads back from its file
    (msgspec's JSON writer would do it in C, but refuses text Python holds, a lone surrogate)."""
    if isinstance(value, dict):
        return {key: _lists(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_lists(item) for item in value]
    return value


def _written(value: object) -> object:
    """What msgspec does not write itself: a path, as its text."""
    if isinstance(value, PurePath):
        return str(value)
    raise NotImplementedError(f"{type(value).__name__} is not written to JSON")


def fields_of(schema: type[Any]) -> dict[str, msgspec.inspect.Field]:
    """The declared fields of a Struct, by name."""
    info = msgspec.inspect.type_info(schema)
    assert isinstance(info, msgspec.inspect.StructType)
    return {f.name: f for f in info.fields}


def _declared(field: msgspec.inspect.Field) -> tuple[msgspec.inspect.Type, dict[str, Any]]:
    """The field's type, optional (`| None`) taken off, and its JSON-schema extras."""
    kind = field.type
    if isinstance(kind, msgspec.inspect.UnionType):
        kept = [t for t in kind.types if not isinstance(t, msgspec.inspect.NoneType)]
        kind = kept[0] if len(kept) == 1 else kind
    extra: dict[str, Any] = {}
    if isinstance(kind, msgspec.inspect.Metadata):
        extra = dict(kind.extra_json_schema or {})
        kind = kind.type
    return kind, extra


def meanings(schema: type[Any]) -> dict[str, str]:
    """Each field's declared meaning (`Meta(description=…)`), by name ("" when none)."""
    return {
        name: str(_declared(field)[1].get("description", ""))
        for name, field in fields_of(schema).items()
    }


def value_problem(field: msgspec.inspect.Field, value: object) -> str:
    """What is wrong with `value` for `field`, in a config error's words: its JSON type, a
    non-finite number, or its declared range ("must be between 0.5 and 0.999, not 1.5")."""
    kind, _ = _declared(field)
    if not isinstance(kind, msgspec.inspect.IntType | msgspec.inspect.FloatType):
        return f"must be {kind.__class__.__name__.removesuffix('Type').lower()}, not {value!r}"
    whole = isinstance(kind, msgspec.inspect.IntType)
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or (whole and not isinstance(value, int))
    ):
        return f"must be {'an integer' if whole else 'a number'}, not {value!r}"
    low, high = kind.ge, kind.le
    if low is not None and high is not None:
        return f"must be between {low} and {high}, not {value}"
    if not math.isfinite(value):
        return f"must be a finite number, not {value}"
    if low is not None:
        return f"must be at least {low:g}, not {value:g}"
    if kind.gt is not None:
        return f"must be above {kind.gt:g}, not {value:g}"
    return f"must be at most {high:g}, not {value:g}"


__all__ = ["as_json", "checked", "error_path", "fields_of", "meanings", "value_problem"]
