"""The JSON that crosses a runner's wire, typed: what is sent, and how what comes back is read.

A reply is untrusted (`replies` bounds its size, depth and numbers); once decoded it is an
`object` until a read below has checked its type. The reads are lenient on purpose, as runners
of every era answer all sorts: a field of the wrong type reads as absent (None, {} or []),
never as an error, and the caller decides what an absent field means. Each kind's folder types
its own formats on top of these (`llamacpp/wire.py`, `ollama/wire.py`).
"""

from __future__ import annotations

from typing import TypedDict

# A decoded JSON object, its values not yet checked.
JsonObject = dict[str, object]
# One chat message in OpenAI's format (what corpora and lane records hold), and the tools a
# turn offers, as OpenAI's function specs.
Message = dict[str, object]
Messages = list[Message]
ToolSpecs = list[JsonObject] | None


class ToolFunction(TypedDict):
    """A tool call's function as a turn's result reassembles it (OpenAI's shape)."""

    name: str
    arguments: str | JsonObject


def as_object(value: object) -> JsonObject:
    """`value` when it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}


def field(value: object, key: str) -> object:
    """The field `key` of `value` when it is an object (None otherwise, or when absent)."""
    return value.get(key) if isinstance(value, dict) else None


def text_or_none(value: object) -> str | None:
    """`value` when it is a string."""
    return value if isinstance(value, str) else None


def count_or_none(value: object) -> int | None:
    """`value` when it is an integer (JSON's true and false are not counts)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def objects(value: object) -> list[JsonObject]:
    """The objects of `value` when it is a list, skipping anything else in it."""
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def first_object(value: object) -> JsonObject:
    """The first item of a list when it is an object (a reply's `choices[0]`), else {}."""
    return as_object(value[0] if isinstance(value, list) and value else None)


def names_in(entries: object, *keys: str) -> tuple[str, ...]:
    """The first non-empty string under one of `keys` in each object of the list `entries`
    (a status reply's model list); nothing for anything else."""
    names: list[str] = []
    for entry in objects(entries):
        for key in keys:
            name = entry.get(key)
            if isinstance(name, str) and name:
                names.append(name)
                break
    return tuple(names)
