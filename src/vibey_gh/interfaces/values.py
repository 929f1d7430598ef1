"""`@frozen_value`: a frozen dataclass whose class is cheap to create.

`dataclass(frozen=True)` compiles six methods from source for every class it decorates
(`__init__`, `__setattr__`, `__delattr__`, `__repr__`, `__eq__`, `__hash__`), about 0.7 ms a
class on this project's reference machine. `slots allowed` creates some 50 such classes on its
path and has a 100 ms budget as a whole process, so that compiling was a third of its own time.

`frozen_value` lets `dataclass` collect the fields (`dataclass(init=False, eq=False,
repr=False)`, which compiles nothing) and gives the class every method as a plain closure over
its fields, nothing compiled. They answer exactly as the generated ones do: `__init__` takes
the fields positionally or by name, fills defaults and factories, and calls `__post_init__`;
assigning or deleting a field raises FrozenInstanceError, and the class is marked frozen as
`dataclass(frozen=True)` marks it; equal when the other object is of the same class and the
compared fields are equal as a tuple; the hash of that tuple of hashed fields; `Name(field=value!r,
…)` with "..." for a recursive value. A method the class defines itself is kept, as `dataclass`
keeps it. `fields`, `replace`, `asdict` and pattern matching work as on any dataclass. A class
that inherits from a dataclass is made by `dataclass(frozen=True)` itself, whose checks of the
bases' frozenness this module does not repeat.
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
    if any(dataclasses.is_dataclass(base) for base in cls.__mro__[1:]):
        made = dataclasses.dataclass(frozen=True, eq=False, repr=False)(cls)
    else:
        if cls.__doc__ is None:
            # what `dataclass` would write, without the `inspect` it needs to write it
            cls.__doc__ = f"{cls.__name__}({', '.join(cls.__dict__.get('__annotations__', ()))})"
        if not _collect_fields(cls):
            dataclasses.dataclass(init=False, eq=False, repr=False)(cls)
        made = cls
        _make_frozen(made)
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


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class _Plain:
    """Its `__dataclass_params__` are every value's: frozen, `__eq__` and `__repr__` its own."""


# Words of an annotation that `dataclass` reads as more than a field's type.
_SPECIAL_ANNOTATIONS = ("ClassVar", "InitVar", "KW_ONLY")


def _collect_fields(cls: type) -> bool:
    """Record the fields of a plain class as `dataclass(init=False, eq=False, repr=False)`
    records them, or say False for any other class (a base, an annotation that is not a
    plain type's name, a mutable default, a field without a type), which `dataclass` then
    collects itself: it reads each annotation's text for ClassVar and InitVar, a third of
    its time on a class.
    """
    own = cls.__dict__
    annotations = own.get("__annotations__", {})
    if cls.__bases__ != (object,):
        return False
    fields: dict[str, dataclasses.Field[Any]] = {}
    for name, annotation in annotations.items():
        if not isinstance(annotation, str) or any(w in annotation for w in _SPECIAL_ANNOTATIONS):
            return False
        default = own.get(name, dataclasses.MISSING)
        made = (
            default
            if isinstance(default, dataclasses.Field)
            else dataclasses.field(default=default)
        )
        if made.default is not dataclasses.MISSING and made.default.__class__.__hash__ is None:
            return False  # dataclass refuses a mutable default; let it say so
        made.name, made.type = name, annotation
        made._field_type = dataclasses._FIELD  # type: ignore[attr-defined,union-attr]
        if made.kw_only is dataclasses.MISSING:
            made.kw_only = False
        fields[name] = made
    if any(
        isinstance(value, dataclasses.Field) and name not in fields for name, value in own.items()
    ):
        return False
    cls.__dataclass_params__ = _Plain.__dataclass_params__  # type: ignore[attr-defined]
    cls.__dataclass_fields__ = fields  # type: ignore[attr-defined]
    for name, made in fields.items():
        if isinstance(own.get(name), dataclasses.Field):
            if made.default is dataclasses.MISSING:
                delattr(cls, name)
            else:
                setattr(cls, name, made.default)
    if "__match_args__" not in own:
        cls.__match_args__ = tuple(fields)  # type: ignore[attr-defined,misc]
    return True


def _make_frozen(made: type) -> None:
    """What `dataclass(frozen=True)` adds to a class `dataclass(init=False)` made: __init__,
    the refusal to assign or delete a field, and the frozen mark."""
    fields = dataclasses.fields(made)
    if "__init__" not in made.__dict__:
        made.__init__ = _init_of(made, fields)  # type: ignore[misc]
    if "__setattr__" in made.__dict__ or "__delattr__" in made.__dict__:
        raise TypeError(f"Cannot overwrite attribute __setattr__ in class {made.__name__}")
    names = frozenset(f.name for f in fields)
    made.__setattr__ = _setattr_of(made, names)  # type: ignore[method-assign,assignment]
    made.__delattr__ = _delattr_of(made, names)  # type: ignore[method-assign,assignment]
    made.__dataclass_params__.frozen = True  # type: ignore[attr-defined]


def _init_of(made: type, fields: tuple[dataclasses.Field[Any], ...]) -> Callable[..., None]:
    names = tuple(f.name for f in fields)
    known = frozenset(names)
    # name -> (default, factory): what fills a field not given
    fills: dict[str, tuple[Any, Any]] = {}
    for f in fields:
        if f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING:
            fills[f.name] = (f.default, f.default_factory)
        elif fills:
            raise TypeError(f"non-default argument {f.name!r} follows default argument")
    post_init = hasattr(made, "__post_init__")
    where = f"{made.__qualname__}.__init__()"
    count = len(names)
    least = count - len(fills)  # as Python words it, `self` counted
    takes = f"from {least + 1} to {count + 1}" if fills else f"{count + 1}"
    takes += " positional argument" if count == 0 else " positional arguments"

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        own = self.__dict__
        if len(args) == count and not kwargs:
            own.update(zip(names, args, strict=True))
        else:
            if len(args) > count:
                raise TypeError(f"{where} takes {takes} but {len(args) + 1} were given")
            for key in kwargs:
                if key not in known:
                    raise TypeError(f"{where} got an unexpected keyword argument {key!r}")
            given = len(args)
            for index, name in enumerate(names):
                if index < given:
                    if name in kwargs:
                        raise TypeError(f"{where} got multiple values for argument {name!r}")
                    own[name] = args[index]
                elif name in kwargs:
                    own[name] = kwargs[name]
                elif name in fills:
                    default, factory = fills[name]
                    own[name] = default if factory is dataclasses.MISSING else factory()
                else:
                    missing = [n for n in names[index:] if n not in kwargs and n not in fills]
                    raise TypeError(f"{where} {_missing_text(missing)}")
        if post_init:
            self.__post_init__()

    return __init__


def _missing_text(names: list[str]) -> str:
    """Python's own words for required arguments not given."""
    quoted = [repr(name) for name in names]
    if len(quoted) == 1:
        return f"missing 1 required positional argument: {quoted[0]}"
    listed = (
        " and ".join(quoted) if len(quoted) == 2 else ", ".join(quoted[:-1]) + ", and " + quoted[-1]
    )
    return f"missing {len(quoted)} required positional arguments: {listed}"


def _setattr_of(made: type[Any], names: frozenset[str]) -> Callable[[Any, str, Any], None]:
    def __setattr__(self: Any, name: str, value: Any) -> None:
        if self.__class__ is made or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
        super(made, self).__setattr__(name, value)

    return __setattr__


def _delattr_of(made: type[Any], names: frozenset[str]) -> Callable[[Any, str], None]:
    def __delattr__(self: Any, name: str) -> None:
        if self.__class__ is made or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
        super(made, self).__delattr__(name)

    return __delattr__


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
