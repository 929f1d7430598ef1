"""The think-time policy: what each option means, its default for a corpus, and bad values."""

from __future__ import annotations

import pytest

from vibey_gh.errors import BadInput
from vibey_gh.interfaces.think import (
    DEFAULT_THINK_CAP_S,
    ThinkAsked,
    ThinkMode,
    ThinkPolicy,
    check_think_cap,
    parse_think_time,
)


def resolve_policy(
    think_time: str | None, cap_s: float, recorded: list[float | None]
) -> ThinkPolicy:
    return ThinkAsked.parse(think_time).with_cap(cap_s).for_corpus(recorded)


def test_recorded_waits_each_turns_own_time_cut_to_the_cap() -> None:
    policy = ThinkPolicy("recorded", cap_s=10.0)
    assert [policy.seconds_before(t) for t in (None, 0.0, 4.5, 48 * 60.0)] == [0, 0, 4.5, 10]
    assert policy.waits and policy.label == "recorded"


def test_none_sends_back_to_back_and_a_number_is_the_same_wait_for_every_turn() -> None:
    assert ThinkPolicy().seconds_before(30.0) == 0.0 and not ThinkPolicy().waits
    fixed = ThinkPolicy("fixed", 2.5, cap_s=1.0)
    assert [fixed.seconds_before(t) for t in (None, 0.0, 99.0)] == [2.5, 2.5, 2.5]
    assert fixed.label == "2.5" and "2.5 s before every turn" in fixed.describe()


def test_unset_means_recorded_where_the_corpus_has_think_times() -> None:
    assert resolve_policy(None, 60.0, [None, 3.0]).mode == "recorded"
    assert resolve_policy(None, 60.0, [None, None]).mode == "none"
    assert resolve_policy("none", 60.0, [3.0]).mode == "none"
    assert resolve_policy("7", 60.0, [None]) == ThinkPolicy("fixed", 7.0, 60.0)


def test_recorded_on_a_corpus_without_timings_names_the_alternatives() -> None:
    with pytest.raises(BadInput, match="holds no think times.*--think-time none or a number"):
        resolve_policy("recorded", 60.0, [None, None])


def test_what_the_command_line_asks_lies_over_the_config_where_it_says_something() -> None:
    asked = ThinkAsked.parse(" 12 ".strip(), "30")
    assert asked == ThinkAsked(ThinkMode.FIXED, 12.0, 30.0)
    cap_only = ThinkAsked.parse(None, "30")
    config = ThinkAsked(ThinkMode.RECORDED, 0.0, 90.0)
    assert cap_only.over(config) == ThinkAsked(ThinkMode.RECORDED, 0.0, 30.0)
    assert asked.over(config) == asked, "what the command line says wins"
    assert ThinkAsked(cap_s=20.0).over(ThinkAsked(cap_s=90.0)).for_corpus([None]) == ThinkPolicy(
        "none", 0.0, 20.0
    )
    with pytest.raises(BadInput, match="--think-cap must be a number"):
        ThinkAsked.parse(None, "soon")


@pytest.mark.parametrize("value", ["-1", "soon", "nan", "inf", -0.5, True, None, "1e9"])
def test_bad_think_times_are_refused(value: object) -> None:
    with pytest.raises(BadInput, match="--think-time must be recorded, none or a number"):
        parse_think_time(value)


@pytest.mark.parametrize("value", [0, -3.0, "12", float("nan"), False, 1e308, 86_400.5])
def test_bad_caps_are_refused_naming_both_bounds(value: object) -> None:
    with pytest.raises(BadInput) as refused:
        check_think_cap(value)
    assert str(refused.value) == (
        f"--think-cap must be a number of seconds above 0 and at most 86400 (a day), not {value!r}"
    )


def test_the_policy_round_trips_and_is_none_where_not_recorded() -> None:
    for policy in (ThinkPolicy(), ThinkPolicy("recorded", cap_s=30.0), ThinkPolicy("fixed", 4.0)):
        assert ThinkPolicy.from_json(policy.to_json()) == policy
    assert ThinkPolicy.from_json(None) == ThinkPolicy("none", 0.0, DEFAULT_THINK_CAP_S)
