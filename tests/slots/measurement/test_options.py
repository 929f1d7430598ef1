"""What a calibration is asked, checked once where the options value is built, and resolved."""

from __future__ import annotations

from pathlib import Path
from typing import cast

import pytest
from msgspec.structs import replace

from vibey_gh.config import LocalModels
from vibey_gh.errors import BadInput
from vibey_gh.interfaces.schema import as_json
from vibey_gh.slots.measurement.calibration_setup import CalibrationOutcome, CalibrationRequest
from vibey_gh.slots.measurement.options import (
    DEMO_MIN_STEP_SECONDS,
    CalibrationOptions,
    StepSeconds,
    SweepAnswer,
    SweepOptions,
    largest_slots,
    parse_slots,
    resolve_request,
)


def refuse(text: str) -> None:
    raise AssertionError(f"nothing to warn about, not {text!r}")


def test_a_negative_or_nan_wait_is_refused_where_the_options_are_built() -> None:
    for seconds in (-5.0, float("nan")):
        with pytest.raises(BadInput, match="--wait-idle takes 0 or more seconds"):
            CalibrationOptions(wait_idle_s=seconds)
    assert CalibrationOptions(wait_idle_s=0.0).wait_idle_s == 0.0


def test_the_largest_n_is_the_demos_few_only_for_a_demo_sweep() -> None:
    assert largest_slots(None, demo=True) == 4 and largest_slots(None, demo=False) == 16
    assert largest_slots(8, demo=True) == 8
    assert CalibrationOptions(demo=True, sweep=SweepOptions()).largest == 4
    assert CalibrationOptions(demo=True).largest == 16  # a soak's request keeps the default
    assert parse_slots("1, 2,4", largest_slots(None, demo=True)) == (1, 2, 4)
    with pytest.raises(BadInput, match="between 1 and 4"):
        parse_slots("1,5", largest_slots(None, demo=True))


def test_step_seconds_lie_over_the_config_and_the_demo_has_its_own() -> None:
    config = LocalModels(max_step_seconds=400.0)
    shorter = StepSeconds(30.0).over(config, demo=False)
    assert (shorter.min_step_seconds, shorter.max_step_seconds) == (30.0, 400.0)
    demo = StepSeconds().over(LocalModels(), demo=True)
    # the demo interleaves blocks of 7 s: its cap holds thirty of them
    assert demo.min_step_seconds == DEMO_MIN_STEP_SECONDS and demo.step_cap_seconds == 210.0
    plain = StepSeconds(interleave=0.0).over(LocalModels(), demo=True)
    assert plain.interleave_seconds is None and plain.step_cap_seconds == 60.0
    assert StepSeconds().over(config, demo=False) == config
    with pytest.raises(BadInput, match="--max-step-seconds 10 is below the minimum 60"):
        StepSeconds(longest=10.0).over(LocalModels(), demo=False)
    with pytest.raises(BadInput, match="--min-step-seconds must be between"):
        StepSeconds(shortest=0.0)


def test_interleaved_blocks_lie_over_the_config_and_need_twenty_in_a_cap() -> None:
    assert StepSeconds().over(LocalModels(), demo=False).interleave_seconds is None
    assert StepSeconds().over(LocalModels(), demo=True).interleave_seconds == 7.0
    # told its own step lengths, the demo interleaves only where asked
    assert StepSeconds(2.0).over(LocalModels(), demo=True).interleave_seconds is None
    config = LocalModels(interleave_seconds=15.0)
    assert StepSeconds().over(config, demo=False).interleave_seconds == 15.0
    asked = StepSeconds(interleave=12.0).over(config, demo=False)
    assert asked.interleave_seconds == 12.0 and asked.step_cap_seconds == 300.0
    # 0 turns interleaving off, the config's too
    assert StepSeconds(interleave=0.0).over(config, demo=False).interleave_seconds is None
    # the demo measures its steps long enough for thirty of its blocks
    assert StepSeconds(interleave=15.0).over(LocalModels(), demo=True).step_cap_seconds == 450.0
    with pytest.raises(BadInput, match="fewer than the 20 blocks of 20 s"):
        StepSeconds(interleave=20.0).over(LocalModels(), demo=False)
    with pytest.raises(BadInput, match="--interleave-seconds must be between 0.1 and 3600"):
        StepSeconds(interleave=0.05)


def test_a_corpus_is_required_and_the_demo_takes_none(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="--corpus FILE is required"):
        resolve_request(CalibrationOptions(), LocalModels(), refuse)
    both = CalibrationOptions(demo=True, corpus_path=tmp_path / "c.json")
    with pytest.raises(BadInput, match="--demo builds its own corpus; drop --corpus"):
        resolve_request(both, LocalModels(), refuse)


def test_a_sweeps_answer_says_by_its_keys_whether_the_calibration_ran(tmp_path: Path) -> None:
    ran = CalibrationOutcome("f" * 16, 2, "measured", True, True, tmp_path / "e.json")
    request = cast(CalibrationRequest, object())  # only whether there is one is read
    answered = as_json(SweepAnswer(ran, request, {"allowed": {"allowed": 2}}).output())
    assert answered["evidence"] == str(tmp_path / "e.json") and answered["replaced"] is None
    assert list(answered)[-2:] == ["other_corpus", "after"]
    skipped = replace(ran, skipped=True)
    assert "after" not in as_json(SweepAnswer(skipped, request).output())
    before_any_corpus = as_json(SweepAnswer(replace(ran, reason="busy")).output())
    assert before_any_corpus == {"fingerprint": "f" * 16, "skipped": True, "reason": "busy"}


def test_the_demo_measures_turns_of_at_most_2048_tokens_at_its_window_and_interleaves() -> None:
    """The demo's turns reach 2,048 tokens with answers of 64, measured at its 4,096 window in
    blocks of 7 s; a smaller window draws the turns for itself; the what-if at half the window
    keeps the whole-window corpus, whose deep turns are what it refuses."""
    asked = CalibrationOptions(demo=True, sweep=SweepOptions())
    demo = resolve_request(asked, LocalModels(), refuse)
    assert demo.window == 4096 and demo.corpus.window == 2048 and demo.max_tokens == 64
    assert demo.config.interleave_seconds == 7.0
    assert 1024 < demo.corpus.max_depth_estimate <= 2048 - 64
    small = CalibrationOptions(demo=True, window=1024, sweep=SweepOptions())
    assert resolve_request(small, LocalModels(), refuse).corpus.window == 1024
    split = CalibrationOptions(demo=True, sweep=SweepOptions(split_window=True))
    what_if = resolve_request(split, LocalModels(), refuse)
    assert (what_if.window, what_if.corpus.window, what_if.max_tokens) == (2048, 4096, 128)
