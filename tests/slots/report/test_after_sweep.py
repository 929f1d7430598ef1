"""The lines after a sweep: the config line is offered only where it would make `slots allowed`
read this sweep's evidence; a demo's (or another setup's) evidence says what to do instead."""

from __future__ import annotations

from pathlib import Path

from vibey_gh.config import LocalModels
from vibey_gh.slots.gate.allowed import AllowedAnswer
from vibey_gh.slots.report.after_sweep import describe_after, what_allowed_answers_now

MEASURED_FP, CONFIG_FP = "a6db179e5d5c5b1a", "cb8a82fa0679835e"


def decide(config: LocalModels) -> AllowedAnswer:
    """Evidence exists for the simulated runner only, as after a simulated demo."""
    if config.concurrent_runs != "measured":
        return AllowedAnswer(1, "declared 1 (concurrent_runs = 1)", None, None, False, 1)
    if config.runner == "simulated":
        return AllowedAnswer(4, "measured: 4 slots …", MEASURED_FP, None, False, "measured", 4)
    return AllowedAnswer(
        1,
        "unmeasured: no evidence for this fingerprint; nearest evidence differs: runner "
        "simulated simulated 0.1.0 → embedded xllamacpp",
        CONFIG_FP,
        None,
        True,
        "measured",
        reason_code="unmeasured",
    )


def test_a_demo_on_another_runner_does_not_offer_the_config_line(tmp_path: Path) -> None:
    written = LocalModels(source=tmp_path / "vibey-gh.toml")
    demo = written.with_overrides(runner="simulated", window=4096)
    after = what_allowed_answers_now(demo, decide, written, MEASURED_FP)
    assert after["config_applies"] is False
    lines = describe_after(after)
    assert lines[0] == "allowed now: 1 — declared 1 (concurrent_runs = 1)"
    assert lines[1].startswith(
        "the evidence supports 4 for the setup this sweep measured, not for the one "
        f'{tmp_path / "vibey-gh.toml"} names: with concurrent_runs = "measured" under '
        "[local_models] there, "
        "`slots allowed` would answer 1 (unmeasured: no evidence for this fingerprint; "
    )
    assert lines[1].endswith(
        "`vibey-gh slots calibrate --corpus FILE` (`vibey-gh slots corpus` builds one)"
    )
    assert len(lines) == 2, "no config line to paste"


def test_a_sweep_of_the_configured_setup_offers_the_config_line(tmp_path: Path) -> None:
    written = LocalModels(runner="simulated", source=tmp_path / "vibey-gh.toml")
    after = what_allowed_answers_now(written, decide, written, MEASURED_FP)
    assert after["config_applies"] is True
    lines = describe_after(after)
    assert lines[1].endswith(f"put this line under [local_models] in {tmp_path / 'vibey-gh.toml'}:")
    assert lines[2] == '  concurrent_runs = "measured"'


def test_a_config_file_that_does_not_exist_is_named_as_one_to_create(tmp_path: Path) -> None:
    """No config file (the defaults): the lines never name the file as if it were there."""
    missing = tmp_path / "vibey-gh.toml"
    defaults = LocalModels(runner="simulated")
    after = what_allowed_answers_now(defaults, decide, defaults, MEASURED_FP)
    assert after["config_exists"] is False
    lines = describe_after(after)
    assert "(the file does not exist yet: create it with these lines):" in lines[1]
    assert lines[2:] == ["  [local_models]", '  concurrent_runs = "measured"']
    demo = LocalModels().with_overrides(runner="simulated", window=4096)
    lines = describe_after(what_allowed_answers_now(demo, decide, LocalModels(), MEASURED_FP))
    assert "not for the defaults (no config file yet; " in lines[1]
    assert f"the one {missing} names" not in lines[1]
