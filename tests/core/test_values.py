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


@pytest.mark.parametrize(("body", "annotations", "args"), SHAPES)
def test_the_fields_are_recorded_as_dataclass_records_them(
    body: dict[str, Any], annotations: dict[str, Any], args: tuple[Any, ...]
) -> None:
    for text in (False, True):  # as written, and as `from __future__ import annotations` has it
        written = {
            k: (v if isinstance(v, str) or not text else getattr(v, "__name__", str(v)))
            for k, v in annotations.items()
        }
        generated, built = twins(body, written)
        assert repr(generated.__dataclass_fields__) == repr(built.__dataclass_fields__)
        assert generated.__match_args__ == built.__match_args__
        for name in written:
            assert getattr(generated, name, None) == getattr(built, name, None)


def test_a_plain_class_of_text_annotations_is_collected_without_dataclass() -> None:
    made = twins(
        {"y": field(default="b"), "z": field(default_factory=list)},
        {"x": "int", "y": "str", "z": "list"},
    )
    generated, built = made
    assert "y" in vars(built) and "z" not in vars(built)  # as dataclass leaves the class
    assert repr(built(1)) == repr(generated(1)) == "Point(x=1, y='b', z=[])"
    assert built.__dataclass_params__ is not generated.__dataclass_params__
    assert repr(built.__dataclass_params__).replace("repr=False", "repr=True").replace(
        "eq=False", "eq=True"
    ) == repr(generated.__dataclass_params__)


def test_a_mutable_default_is_refused_as_dataclass_refuses_it() -> None:
    with pytest.raises(ValueError, match="mutable default <class 'list'> for field x"):
        twins({"x": []}, {"x": "list"})


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


def test_init_takes_fields_as_the_generated_one_does() -> None:
    body = {"y": "b", "tags": field(default_factory=list)}
    generated, built = twins(body, {"x": int, "y": str, "tags": list})
    for args, kwargs in [
        ((1,), {}),
        ((1, "c"), {}),
        ((), {"x": 1, "tags": [2]}),
        ((1,), {"y": "d"}),
    ]:
        assert repr(built(*args, **kwargs)) == repr(generated(*args, **kwargs))
    assert built(1).tags is not built(1).tags  # a fresh default from the factory each time
    assert list(vars(built(1, tags=[3], y="e"))) == ["x", "y", "tags"]  # in field order
    for args, kwargs, message in [
        ((), {}, "missing 1 required positional argument: 'x'"),
        ((1, "c", [], 4), {}, "takes from 2 to 4 positional arguments but 5 were given"),
        ((1,), {"x": 2}, "got multiple values for argument 'x'"),
        ((1,), {"z": 2}, "got an unexpected keyword argument 'z'"),
    ]:
        with pytest.raises(TypeError, match=message):
            generated(*args, **kwargs)
        with pytest.raises(TypeError, match=message):
            built(*args, **kwargs)


@pytest.mark.parametrize(
    ("annotations", "given"),
    [
        ({}, 1),
        ({"x": int}, 2),
        ({"x": int}, 3),
        ({"x": int, "y": int}, 0),
        ({"x": int, "y": int, "z": int}, 0),
    ],
)
def test_wrong_arguments_are_worded_as_python_words_them(
    annotations: dict[str, Any], given: int
) -> None:
    generated, built = twins({}, annotations)
    args = tuple(range(given))
    with pytest.raises(TypeError) as expected:
        generated(*args)
    with pytest.raises(TypeError) as got:
        built(*args)
    assert str(got.value) == str(expected.value)


def test_a_non_default_field_after_a_default_one_is_refused_as_dataclass_refuses_it() -> None:
    with pytest.raises(TypeError, match="non-default argument 'x' follows default argument"):
        twins({"y": "b"}, {"y": str, "x": int})


def test_post_init_runs_and_fields_cannot_be_deleted_or_added() -> None:
    seen: list[object] = []
    _, built = twins({"__post_init__": lambda self: seen.append(self.x)}, {"x": int})
    value = built(7)
    assert seen == [7]
    with pytest.raises(FrozenInstanceError, match="cannot delete field 'x'"):
        del value.x
    with pytest.raises(FrozenInstanceError, match="cannot assign to field 'other'"):
        value.other = 1
    assert dataclasses.fields(built)[0].name == "x"
    assert built.__dataclass_params__.frozen  # type: ignore[attr-defined]


def test_a_frozen_dataclass_may_inherit_from_a_value_and_a_value_from_a_dataclass() -> None:
    @frozen_value
    class Base:
        x: int

    @dataclass(frozen=True)
    class Child(Base):
        y: int = 0

    @frozen_value
    class Grandchild(Child):
        z: int = 1

    assert repr(Grandchild(1, 2, 3)).endswith(".Grandchild(x=1, y=2, z=3)")
    with pytest.raises(FrozenInstanceError):
        Child(1).y = 2  # type: ignore[misc]
