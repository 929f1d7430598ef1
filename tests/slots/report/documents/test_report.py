"""The Markdown report: rendered from a recorded sweep and compared with a golden file."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest

from tests.slots.judging.test_steady_state import closed_loop
from tests.support.evidence import (
    EVIDENCE_FIXTURES,
    RECORDED,
    RECORDED_FINGERPRINT,
    recorded_evidence,
    synthetic_evidence,
)
from tests.support.rendering import report_of, summary_of, write_report_of
from tests.support.slot_builders import answer, make_step, same_answers
from vibey_gh.interfaces.bounds import Bounds
from vibey_gh.slots.evidence.store import Evidence, evidence_from_json, load_evidence
from vibey_gh.slots.judging.judge import judge_sweep
from vibey_gh.slots.report.documents.context_sections import NOT_MEASURED
from vibey_gh.slots.report.documents.facts import (
    answer_text,
    depth_facts,
    divergence_facts,
    noise_facts,
)
from vibey_gh.slots.report.documents.markdown import report_paths
from vibey_gh.slots.report.plotting.plots import PLOT_NAMES
from vibey_gh.slots.report.tables.step_table import markdown_table, step_rows

# A real sweep (embedded runner, shipped SmolLM2, steps 1,1,2, window 4096, 128 output tokens),
# with the corpus's per-turn depth estimates added under corpus.depth_estimates.
GOLDEN = EVIDENCE_FIXTURES / f"slots-{RECORDED_FINGERPRINT}-report.md"
STEM = RECORDED.stem
# Set this to rewrite the golden file from the current renderer — on purpose only, then review
# the diff like any other change.
REGENERATE_ENV = "VIBEY_GH_REGENERATE_GOLDEN"


def plot_files() -> dict[str, str]:
    return {name: f"{STEM}-{name}.png" for name in PLOT_NAMES}


def without_estimates(evidence: Evidence) -> Evidence:
    data = dict(evidence.data)
    data["corpus"] = {k: v for k, v in data["corpus"].items() if k != "depth_estimates"}
    return evidence_from_json(data, None)


def test_report_of_the_recorded_sweep_matches_the_golden_file() -> None:
    rendered = report_of(load_evidence(RECORDED), Bounds(), plot_files())
    if os.environ.get(REGENERATE_ENV):
        GOLDEN.write_text(rendered, encoding="utf-8")
    assert rendered == GOLDEN.read_text(encoding="utf-8"), (
        f"the report differs from {GOLDEN.name}; if the change is intended, rerun with "
        f"{REGENERATE_ENV}=1 and review the diff"
    )


def test_report_reuses_the_step_table_and_embeds_every_plot() -> None:
    evidence = load_evidence(RECORDED)
    report = report_of(evidence, Bounds(), plot_files())
    table = markdown_table(step_rows(evidence.steps, judge_sweep(evidence.steps, Bounds())))
    assert table in report
    for name, file_name in plot_files().items():
        assert f"]({file_name})" in report, name
    assert "![" not in report_of(evidence, Bounds())


def test_measured_depth_and_its_ratio_to_the_estimate() -> None:
    evidence = load_evidence(RECORDED)
    judgement = judge_sweep(evidence.steps, Bounds())
    facts = depth_facts(evidence, judgement)
    assert facts is not None
    first = evidence.steps[0]
    counts = sorted(t.result.prompt_tokens for t in first.turns if t.result.served)
    assert (facts.minimum, facts.maximum) == (counts[0], counts[-1])
    estimates = evidence.data["corpus"]["depth_estimates"]
    expected = sum(counts) / sum(estimates[t.turn_id] for t in first.turns)
    assert facts.ratio == pytest.approx(expected)
    assert facts.matched == len(counts)


def test_depth_ratio_is_unavailable_with_a_reason_without_estimates() -> None:
    evidence = without_estimates(load_evidence(RECORDED))
    judgement = judge_sweep(evidence.steps, Bounds())
    facts = depth_facts(evidence, judgement)
    assert facts is not None and facts.ratio is None
    assert "does not carry" in (facts.ratio_reason or "")
    assert "unavailable: the evidence does not carry" in report_of(evidence, Bounds())
    # the caller may hand in the estimates when it has the corpus at hand
    given = {t.turn_id: 100 for t in evidence.steps[0].turns}
    with_given = depth_facts(evidence, judgement, given)
    assert with_given is not None and with_given.ratio is not None
    assert with_given.ratio == pytest.approx(
        sum(t.result.prompt_tokens for t in evidence.steps[0].turns) / (100 * len(given))
    )


def test_noise_is_the_spread_of_the_one_slot_runs() -> None:
    steps = [
        make_step(0, 1, same_answers(), duration=100.0),
        make_step(1, 1, same_answers(), duration=125.0),
        make_step(2, 2, same_answers(), duration=110.0),
    ]
    judgement = judge_sweep(steps, Bounds())
    noise = noise_facts(judgement)
    assert noise.noise == pytest.approx(0.25)  # 360 vs 288 turns/h
    report = report_of(synthetic_evidence(steps), Bounds())
    assert "differ by 25.0%" in report
    assert "N=2: 327.3 turns/h, -9.1% against the better one-slot run: no gain." in report
    assert "measured without intervals" in report


def test_noise_is_unknown_with_a_single_one_slot_run() -> None:
    steps = [make_step(0, 1, same_answers()), make_step(1, 2, same_answers(), duration=50.0)]
    judgement = judge_sweep(steps, Bounds())
    assert noise_facts(judgement).noise is None
    assert "Noise is unknown: one slot was measured fewer than twice." in report_of(
        synthetic_evidence(steps), Bounds()
    )


def test_divergence_offsets_are_where_changed_answers_first_differ() -> None:
    reference = [answer("abcdef"), answer("same"), answer(tools=[("read_file", {"path": "a"})])]
    changed = [answer("abXdef"), answer("same"), answer(tools=[("read_file", {"path": "b"})])]
    steps = [
        make_step(0, 1, reference),
        make_step(1, 1, reference),
        make_step(2, 2, changed),
    ]
    found = divergence_facts(synthetic_evidence(steps), judge_sweep(steps, Bounds()))
    assert [(f.name, f.changed) for f in found] == [("N=1 again", 0), ("N=2", 2)]
    tool_offset = len('[{"arguments": {"path": "')
    assert found[1].offsets == (2, tool_offset)
    assert found[1].structure_changed == 0
    assert found[1].median == pytest.approx((2 + tool_offset) / 2)


def test_answer_text_appends_tool_calls_as_json() -> None:
    assert answer_text(answer("plain")) == "plain"
    with_tool = answer_text(answer("", tools=[("read_file", {"path": "x"})]))
    assert with_tool == '[{"arguments": {"path": "x"}, "name": "read_file"}]'


def test_report_says_when_todays_bounds_change_the_recorded_decision() -> None:
    evidence = load_evidence(RECORDED)
    assert "When it was recorded" not in report_of(evidence, Bounds())
    generous = Bounds(min_gain=-0.95)  # accept even a slower step
    report = report_of(evidence, generous)
    assert "**Ideal N = 2.**" in report
    assert "When it was recorded this evidence supported 1" in report


def test_not_measured_lists_the_fixed_items_and_the_deepest_turn() -> None:
    report = report_of(load_evidence(RECORDED), Bounds())
    section = report.split("## Not measured", 1)[1]
    for item in NOT_MEASURED:
        assert f"- {item}" in section
    assert "turns deeper than the deepest replayed, 2,274 tokens" in section
    assert "slot counts other than 1, 2" in section


@pytest.mark.plots
def test_write_report_writes_private_files_that_the_markdown_points_at(tmp_path: Path) -> None:
    written = write_report_of(load_evidence(RECORDED), Bounds(), tmp_path / "out", STEM)
    report = tmp_path / "out" / f"{STEM}-report.md"
    assert written[0] == report
    assert sorted(p.name for p in written[1:]) == sorted(plot_files().values())
    markdown = report.read_text(encoding="utf-8")
    for path in written:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        if path.suffix == ".png":
            assert f"]({path.name})" in markdown
    assert stat.S_IMODE((tmp_path / "out").stat().st_mode) == 0o700
    assert not list((tmp_path / "out").glob(".tmp-*"))
    assert report_paths(tmp_path / "out" / f"{STEM}.json") == written


def test_a_report_without_plots_says_how_to_get_them(tmp_path: Path) -> None:
    written = write_report_of(
        load_evidence(RECORDED), Bounds(), tmp_path / "out", STEM, plotting=False
    )
    assert [p.name for p in written] == [f"{STEM}-report.md"]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [f"{STEM}-report.md"]
    markdown = written[0].read_text(encoding="utf-8")
    assert "No plots: this install leaves out matplotlib" in markdown
    assert "pip install 'vibey-gh[plots]'" in markdown
    assert ".png)" not in markdown


def test_the_report_shows_the_corpus_profile_where_the_evidence_carries_it() -> None:
    profile = {
        "runs": 2,
        "turns_per_run": {"p10": 3, "p50": 3, "p90": 4, "max": 4},
        "depth_estimate": {"p10": 23, "p50": 165, "p90": 363, "max": 363},
        "think_s": {"p10": 0.5, "p50": 6.0, "p90": 9.0, "max": 9.0},
        "turns_with_think_s": 5,
        "shared_prefix_share": 0.53,
        "origin": {
            "sessions": [
                {
                    "agent": "codex",
                    "id": "0199d1c4",
                    "started": "2026-03-02T10:00:00+00:00",
                    "ended": "2026-03-02T10:00:30+00:00",
                    "turns": 4,
                    "skipped_records": 2,
                }
            ]
        },
    }

    def with_profile(data: dict[str, Any]) -> None:
        data["corpus"]["profile"] = profile

    report = report_of(evidence_from_json(recorded_evidence(with_profile), None), Bounds())
    assert "- shared prefix 53% of the characters sent" in report
    assert "- tool time (s) p10 0.5 / p50 6 / p90 9 / max 9 (5 turns timed)" in report
    assert "- from codex session 0199d1c4 (2026-03-02T10:00:00+00:00" in report


def test_the_summary_says_how_much_of_the_prompts_came_from_the_runners_cache() -> None:

    def warm(data: dict[str, Any]) -> None:
        for step in data["steps"]:
            for turn in step["turns"]:
                result = turn["result"]
                if result.get("prompt_tokens"):
                    result["cached_tokens"] = result["prompt_tokens"] // 2

    evidence = evidence_from_json(recorded_evidence(warm), None)
    line = "Prompt tokens the runner took from its cache (a prefix it already held): N=1 "
    assert line in summary_of(evidence, Bounds())
    assert line in report_of(evidence, Bounds())
    assert "from its cache" not in summary_of(load_evidence(RECORDED), Bounds())


def test_a_paired_sweeps_report_says_how_its_intervals_were_read() -> None:
    """Steady steps paired with one slot: the interval is read on paired work and a gain is
    over one slot (the pooled runs), not over the better one-slot run."""
    wobble = [1.0, 1.1, 0.9, 1.05, 0.95] * 5
    steps = [closed_loop(1, wobble, index=0), closed_loop(1, wobble, index=1)]
    steps.append(closed_loop(2, [w * 0.8 for w in wobble], index=2))
    report = report_of(synthetic_evidence(steps), Bounds())
    assert "(90%; paired with one slot, resampled by blocks of time)" in report
    assert "carries the noise of both the step and one slot." in report
    assert "against one slot:" in report and "better one-slot run" not in report
