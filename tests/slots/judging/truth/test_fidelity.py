from __future__ import annotations

from tests.support.slot_builders import answer
from vibey_gh.slots.judging.truth.fidelity import agreement, first_divergence, structure


def test_structure_is_tool_names_and_sorted_argument_names_or_text() -> None:
    call = answer(tools=[("read_file", {"path": "a", "offset": 1}), ("list_dir", {"path": "."})])
    assert structure(call) == (("read_file", ("offset", "path")), ("list_dir", ("path",)))
    assert structure(answer("hello")) == ("text",)


def test_agreement_counts_only_turns_served_in_both() -> None:
    ref = {"a": answer("x"), "b": answer(tools=[("read_file", {"path": "1"})]), "c": answer("y")}
    other = {"a": answer("x"), "b": answer(tools=[("read_file", {"path": "2"})])}
    result = agreement(ref, other)
    assert result.compared == 2
    assert result.structural == 1.0
    assert result.exact == 0.5
    assert result.changed_turns == ("b",)


def test_first_divergence_offsets() -> None:
    assert first_divergence("abc", "abc") is None
    assert first_divergence("abcd", "abXd") == 2
    assert first_divergence("abc", "abcdef") == 3
