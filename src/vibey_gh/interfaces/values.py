"""`@frozen_value`: a frozen dataclass whose class is cheap to create.

`dataclass(frozen=True)` compiles six methods from source for every class it decorates
(`__init__`, `__setattr__`, `__delattr__`, `__repr__`, `__eq__`, `__hash__`), about 0.7 ms a
class on this project's reference machine. `slots allowed` creates some 35 such classes on its
path and has a 100 ms budget as a whole process, so that compiling was a third of its own time.

`frozen_value` makes the same frozen dataclass with `dataclass(frozen=True, eq=False,
repr=False)`, then gives it equality, a hash and a repr built from its fields by plain
closures, nothing compiled. They answer exactly as the generated ones do: equal when the
other object is of the same class and the compared fields are equal as a tuple; the hash of
that tuple of hashed fields; `Name(field=value!r, …)` with "..." for a recursive value. A method
the class defines itself is kept, as `dataclass` keeps it. `fields`, `replace`, `asdict` and
pattern matching work as on any dataclass.
"""

from __future__ import annotations

import dataclasses
import reprlib
from collections.abc import Callable
from operator import attrgetter
from typing import Any, TypeVar, dataclass_transform

T = TypeVar("T")


@dataclass_transform(frozen_default=True, field_specifiers=(dataclasses.field,))
def frozen_value(cls: type[T]) -> type[T]:
    """A frozen dataclass of `cls` (see the module's docstring)."""
    made = dataclasses.dataclass(frozen=True, eq=False, repr=False)(cls)
    own = made.__dict__
    fields = dataclasses.fields(made)  # type: ignore[arg-type]
    compared = tuple(f.name for f in fields if f.compare)
    hashed = tuple(f.name for f in fields if (f.compare if f.hash is None else f.hash))
    shown = tuple(f.name for f in fields if f.repr)
    if "__repr__" not in own:
        made.__repr__ = _repr_of(shown)  # type: ignore[method-assign]
    if "__eq__" not in own:
        made.__eq__ = _eq_of(_values_of(compared))  # type: ignore[method-assign]
    # As dataclass decides: a __hash__ the class wrote is kept; the None Python sets for a
    # class that wrote only __eq__ is not.
    class_hash = own.get("__hash__", dataclasses.MISSING)
    if class_hash is dataclasses.MISSING or (class_hash is None and "__eq__" in own):
        made.__hash__ = _hash_of(_values_of(hashed))  # type: ignore[assignment,method-assign]
    return made


def _values_of(names: tuple[str, ...]) -> Callable[[object], tuple[Any, ...]]:
    """The named attributes of an object, as a tuple in field order."""
    if len(names) >= 2:
        return attrgetter(*names)
    if len(names) == 1:
        name = names[0]
        return lambda value: (getattr(value, name),)
    return lambda value: ()


def _repr_of(names: tuple[str, ...]) -> Callable[[object], str]:
    @reprlib.recursive_repr()
    def __repr__(self: object) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in names)
        return f"{self.__class__.__qualname__}({shown})"

    return __repr__


def _eq_of(values: Callable[[object], tuple[Any, ...]]) -> Callable[[object, object], Any]:
    def __eq__(self: object, other: object) -> Any:
        if other.__class__ is self.__class__:
            return values(self) == values(other)
        return NotImplemented

    return __eq__


def _hash_of(values: Callable[[object], tuple[Any, ...]]) -> Callable[[object], int]:
    def __hash__(self: object) -> int:
        return hash(values(self))

    return __hash__
