"""What a runner reported at start-up: read from real logs, recorded, judged, printed."""

from __future__ import annotations

import pytest
from msgspec.structs import replace

from tests.support.rendering import report_of
from tests.support.runners import FIXTURES
from tests.support.slot_builders import make_step, same_answers
from vibey_gh.interfaces.bounds import Bounds
from vibey_gh.interfaces.schema import as_json, checked
from vibey_gh.runners.logscan import scan_lines
from vibey_gh.slots.judging.baseline import sweep_figures
from vibey_gh.slots.judging.figures import StepFigures
from vibey_gh.slots.judging.judge import judge_figures, judge_step_figures, judge_sweep
from vibey_gh.slots.judging.records import LogEventRecord, RunnerReported, StepRecord
from vibey_gh.slots.judging.truth.reported import (
    describe,
    fill_in,
    runner_mismatch,
    runner_reported_from,
)

LOGS = FIXTURES / "logs"
MIB = 1 << 20


def reported_in(name: str, runner: str) -> RunnerReported | None:
    lines = (LOGS / name).read_text(encoding="utf-8").split("\n")
    events = scan_lines(lines, runner)
    return runner_reported_from(LogEventRecord(e.kind, e.text, dict(e.values)) for e in events)


def test_the_real_embedded_log_reports_two_slots_of_1024_and_its_kv_cache() -> None:
    reported = reported_in("embedded_2x1024.log", "embedded")
    assert reported == RunnerReported(slots=2, window=1024, kv_cache_bytes=45 * MIB)


def test_a_cuda_log_reports_gpu_layers_and_flash_attention_switched_off() -> None:
    reported = reported_in("llama_server_cuda_fa_cpu.log", "llama-server")
    assert reported == RunnerReported(
        slots=2,
        window=8192,
        kv_cache_bytes=896 * MIB,
        gpu_layers=29,
        layers=29,
        attention_fallback="disabled (assigned to CPU)",
    )
    assert describe(reported) == (
        "2 slot(s) × 8192 tokens, KV cache 896.0 MiB, 29/29 layers on a GPU, "
        "flash attention disabled (assigned to CPU)"
    )


@pytest.mark.parametrize(
    ("log", "runner", "slots", "window"),
    [
        ("ollama_era_a.log", "ollama", 2, 4096),
        ("ollama_era_b.log", "ollama", 2, 8192),
        ("ollama_era_c.log", "ollama", 2, 65536),
        ("llama_server_b4747.log", "llama-server", 2, 4096),
    ],
)
def test_every_era_reports_slots_and_window(log: str, runner: str, slots: int, window: int) -> None:
    reported = reported_in(log, runner)
    assert reported is not None and (reported.slots, reported.window) == (slots, window)


def test_ollamas_own_kv_summary_sums_its_devices() -> None:
    events = [
        LogEventRecord("kv_cache", "", {"device": "CUDA0", "size_mib": 1024.0}),
        LogEventRecord("kv_cache", "", {"device": "CUDA1", "size_mib": 512.0}),
    ]
    assert runner_reported_from(events) == RunnerReported(kv_cache_bytes=1536 * MIB)


def test_a_log_that_says_nothing_reports_nothing_and_later_lines_fill_in() -> None:
    assert runner_reported_from([LogEventRecord("load", "", {"phase": "done"})]) is None
    early = RunnerReported(slots=2)
    late = RunnerReported(slots=3, window=1024)
    assert fill_in(early, late) == RunnerReported(slots=2, window=1024)
    assert fill_in(None, late) == late and fill_in(early, None) == early


@pytest.mark.parametrize(
    ("window", "reported", "finding"),
    [
        (4096, None, None),
        (4096, RunnerReported(), None),
        (4096, RunnerReported(slots=2, window=4096), None),
        (4100, RunnerReported(slots=2, window=4352), None),  # padded to a multiple of 256
        (4096, RunnerReported(slots=1, window=4096), "runner reported 1 slot(s), not the 2 asked"),
        (4096, RunnerReported(slots=2, window=2048), "a 2048-token window, not the 4096 asked"),
        (4096, RunnerReported(window=8192), "a 8192-token window, not the 4096 asked"),
    ],
)
def test_a_runner_set_up_otherwise_than_asked_is_named(
    window: int, reported: RunnerReported | None, finding: str | None
) -> None:
    mismatch = runner_mismatch(2, window, reported)
    if finding is None:
        assert mismatch is None
    else:
        assert mismatch is not None and finding in mismatch


def _figures(step_slots: int, mismatch: str | None) -> tuple[StepFigures, object]:
    steps = [make_step(0, 1, same_answers()), make_step(1, 1, same_answers())]
    steps.append(make_step(2, step_slots, same_answers(), duration=50.0))
    figures = sweep_figures(steps)
    return replace(figures.steps[2], runner_mismatch=mismatch), figures.baseline


def test_the_judge_breaks_a_step_whose_runner_was_set_up_otherwise() -> None:
    clean, baseline = _figures(2, None)
    assert judge_step_figures(clean, baseline, Bounds()).qualifies  # type: ignore[arg-type]
    wrong, baseline = _figures(2, "runner reported 1 slot(s), not the 2 asked")
    verdict = judge_step_figures(wrong, baseline, Bounds())  # type: ignore[arg-type]
    assert not verdict.inside_bounds and verdict.label == "breaks runner setup"
    assert verdict.broken[0] == "runner reported 1 slot(s), not the 2 asked"


def test_at_one_slot_a_wrong_setup_is_a_warning() -> None:
    floor, baseline = _figures(1, "runner reported 2 slot(s), not the 1 asked")
    verdict = judge_step_figures(floor, baseline, Bounds())  # type: ignore[arg-type]
    assert verdict.inside_bounds and verdict.warnings[-1].startswith("runner reported 2")


def test_recorded_steps_are_judged_on_what_their_runner_reported() -> None:
    steps = [make_step(0, 1, same_answers()), make_step(1, 1, same_answers())]
    two = replace(
        make_step(2, 2, same_answers(), duration=50.0),
        runner_reported=RunnerReported(slots=1, window=4096),
    )
    judgement = judge_sweep([*steps, two], Bounds())
    assert judgement.verdicts[2].label == "breaks runner setup" and judgement.ideal == 1
    figures = sweep_figures([*steps, two])
    again = judge_figures(checked(as_json(figures), type(figures)), Bounds())
    assert again.verdicts[2].broken == judgement.verdicts[2].broken


def test_runner_reported_survives_the_evidence_file_and_old_steps_still_load() -> None:
    reported = RunnerReported(slots=2, window=1024, kv_cache_bytes=45 * MIB)
    step = replace(make_step(0, 2, same_answers(3)), runner_reported=reported)
    data = as_json(step)
    assert data["runner_reported"]["slots"] == 2
    assert checked(data, StepRecord).runner_reported == reported
    old = dict(data)
    del old["runner_reported"]
    assert checked(old, StepRecord).runner_reported is None
    damaged = dict(data, runner_reported={"slots": "two"})
    bad_slots = "runner_reported.slots: expected a whole number, got 'two'"
    with pytest.raises(ValueError, match=bad_slots):
        checked(damaged, StepRecord)


def test_the_report_prints_each_steps_runner_facts() -> None:
    from vibey_gh.slots.evidence.store import evidence_from_json

    cuda = reported_in("llama_server_cuda_fa_cpu.log", "llama-server")
    steps = [
        replace(make_step(0, 1, same_answers()), runner_reported=RunnerReported(1, 4096)),
        make_step(1, 1, same_answers()),
        replace(make_step(2, 2, same_answers(), duration=50.0), runner_reported=cuda),
    ]
    data = {
        "schema_version": 1,
        "kind": "vibey-gh-evidence",
        "fingerprint": {"id": "0123456789abcdef", "fields": {"window": 4096}},
        "created_at": 1_800_000_000.0,
        "corpus": {"sha256": "c" * 64, "pool_sha256": "p" * 64, "turns": 10, "segments": 4},
        "steps": [as_json(s) for s in steps],
    }
    report = report_of(evidence_from_json(data, None), Bounds())
    assert "  - runner reported: 1 slot(s) × 4096 tokens\n" in report
    assert "  - runner reported: 2 slot(s) × 8192 tokens, KV cache 896.0 MiB, 29/29" in report
    assert "  - breaks: runner reported a 8192-token window, not the 4096 asked" in report
    assert report.count("runner reported:") == 2  # the step without a report has no line
