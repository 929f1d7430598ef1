"""`frozen_value` answers as `dataclass(frozen=True)` does, for every shape the package uses."""

from __future__ import annotations

import dataclasses
import pickle
from dataclasses import FrozenInstanceError, dataclass, field
from typing import Any, ClassVar

import pytest

from vibey_gh.interfaces.values import frozen_value


def twins(body: dict[str, Any], annotations: dict[str, Any]) -> tuple[type, type]:
    """The same class body made by `dataclass(frozen=True)` and by `frozen_value`."""
    made = []
    for decorate in (dataclass(frozen=True), frozen_value):
        namespace = dict(body, __annotations__=dict(annotations), __qualname__="Point")
        made.append(decorate(type("Point", (), namespace)))
    return made[0], made[1]


SHAPES: list[tuple[dict[str, Any], dict[str, Any], tuple[Any, ...]]] = [
    ({}, {}, ()),
    ({}, {"x": int}, (1,)),
    ({"y": "b"}, {"x": int, "y": str}, (1,)),
    ({"tags": field(default_factory=list, compare=False)}, {"x": float, "tags": list}, (2.5,)),
    ({"secret": field(default="s", repr=False)}, {"x": int, "secret": str}, (3,)),
    ({"h": field(default=0, hash=False)}, {"x": int, "h": int}, (4,)),
    ({"kind": "class-level"}, {"x": int, "kind": ClassVar[str]}, (5,)),
]


@pytest.mark.parametrize(("body", "annotations", "args"), SHAPES)
def test_repr_eq_and_hash_match_the_generated_ones(
    body: dict[str, Any], annotations: dict[str, Any], args: tuple[Any, ...]
) -> None:
    generated, built = twins(body, annotations)
    a, b = generated(*args), built(*args)
    assert repr(a) == repr(b)
    assert hash(a) == hash(b)
    assert built(*args) == b
    assert b != a  # another class, as the generated __eq__ says
    assert (b == a) == (a == b)
    assert b.__eq__(a) is NotImplemented
    assert [f.name for f in dataclasses.fields(b)] == [f.name for f in dataclasses.fields(a)]


def test_different_values_differ_and_uncompared_fields_do_not_count() -> None:
    _, built = twins({"tags": field(default_factory=list, compare=False)}, {"x": int, "tags": list})
    assert built(1) != built(2)
    assert built(1, ["a"]) == built(1, ["b"])
    assert hash(built(1, ["a"])) == hash(built(1, ["b"]))


def test_frozen_and_replace_work_as_on_a_dataclass() -> None:
    _, built = twins({"y": "b"}, {"x": int, "y": str})
    value = built(1)
    with pytest.raises(FrozenInstanceError):
        value.x = 2
    assert dataclasses.replace(value, x=2) == built(2, "b")
    assert dataclasses.asdict(value) == {"x": 1, "y": "b"}
    match value:
        case built(x=1, y="b"):
            pass
        case _:
            pytest.fail("pattern matching lost the fields")


@frozen_value
class Pickled:
    x: int
    y: tuple[int, ...] = ()


def test_a_value_pickles_and_compares_after() -> None:
    value = Pickled(1, (2, 3))
    assert pickle.loads(pickle.dumps(value)) == value


def test_a_recursive_value_repr_says_so_as_dataclass_does() -> None:
    generated, built = twins({}, {"items": list})
    a, b = generated([]), built([])
    a.items.append(a)
    b.items.append(b)
    assert repr(b) == repr(a) == "Point(items=[...])"


def test_methods_the_class_writes_are_kept() -> None:
    def own_repr(self: object) -> str:
        return "mine"

    def own_eq(self: object, other: object) -> bool:
        return True

    def own_hash(self: object) -> int:
        return 7

    _, built = twins({"__repr__": own_repr, "__eq__": own_eq, "__hash__": own_hash}, {"x": int})
    assert repr(built(1)) == "mine"
    assert built(1) == built(2)
    assert hash(built(1)) == 7


def test_a_class_that_writes_only_eq_still_gets_the_field_hash() -> None:
    def own_eq(self: object, other: object) -> bool:
        return True

    generated, built = twins({"__eq__": own_eq}, {"x": int})
    assert hash(built(3)) == hash(generated(3)) == hash((3,))
