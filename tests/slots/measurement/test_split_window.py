"""The split-window what-if on the simulated runner: deeper turns sent and refused, reported
per step, written to --out only and never recorded as evidence."""

from __future__ import annotations

from pathlib import Path

import pytest
from msgspec.structs import replace

from tests.support.corpus import TINY_WINDOW, tiny_corpus
from tests.support.progress import Recorder
from tests.support.simulated import MAX_TOKENS, simulated_config
from tests.support.slot_builders import answer
from vibey_gh.composition import build_environment
from vibey_gh.errors import BadInput
from vibey_gh.interfaces.turns import REFUSED_OVER_WINDOW
from vibey_gh.runners.http.chat_turns import refused_prompt_tokens
from vibey_gh.slots.evidence.store import evidence_path, load_evidence
from vibey_gh.slots.judging.truth.refusals import refusals_of
from vibey_gh.slots.measurement.calibrate import run_calibration
from vibey_gh.slots.measurement.calibration_setup import CalibrationRequest
from vibey_gh.slots.report.compare import compare
from vibey_gh.state import StateLayout

HALF = TINY_WINDOW // 2


def test_the_refused_prompts_length_is_read_from_either_runners_refusal() -> None:
    llama_server = {
        "error": {
            "code": 400,
            "message": "request (431 tokens) exceeds the available context size (256 tokens)",
            "type": "exceed_context_size_error",
            "n_prompt_tokens": 431,
            "n_ctx": 256,
        }
    }
    wrapped = {"error": '{"error":{"code":400,"message":"request (5489 tokens) exceeds the '
               'available context size (4096 tokens), try increasing it"}}'}  # fmt: skip
    assert refused_prompt_tokens(llama_server) == 431
    assert refused_prompt_tokens(wrapped) == 5489
    assert refused_prompt_tokens({"error": "too long"}) is None


def request(tmp_path: Path, **extra: object) -> CalibrationRequest:
    corpus, _ = tiny_corpus(tmp_path)
    # short steps: every step replays each turn once whatever its length, and the refusals
    # are what is read
    config = replace(simulated_config(min_step_seconds=0.2, max_step_seconds=0.6), window=HALF)
    return CalibrationRequest(
        config=config,
        corpus=corpus,
        window=HALF,
        max_tokens=MAX_TOKENS,
        slots=(1, 1, 2),
        **extra,  # type: ignore[arg-type]
    )


def test_a_split_window_sweep_reports_refusals_and_is_never_evidence(
    tmp_path: Path, layout: StateLayout
) -> None:
    out = tmp_path / "what-if"
    req = request(tmp_path, split_window=True, out_dir=out)
    env = build_environment(req.config, layout)
    outcome = run_calibration(req, env, Recorder(), bounds_source=lambda: req.config)
    assert not outcome.recorded and outcome.evidence is None
    assert not evidence_path(layout, outcome.fingerprint).exists()
    (written,) = out.glob("slots-*.json")
    evidence = load_evidence(written)
    assert evidence.document.method["split_window"] is True
    assert any("split-window what-if" in note for note in evidence.document.notes)
    for step in evidence.steps:
        refusals = refusals_of(step)
        assert refusals.refused > 0 and refusals.served > 0
        assert refusals.served + refusals.refused == req.corpus.turn_count
        assert refusals.shortest_refused_tokens is not None
        assert refusals.shortest_refused_tokens > HALF
    summary = written.with_suffix(".md").read_text()
    assert "## Split window (what-if)" in summary
    # Each step's throughput names its unit (runs/h or turns/h).
    what_if = summary.split("## Split window (what-if)")[1].split("\n\n")[2]
    assert all(
        row.endswith("turns/h |") or row.endswith("turns/h) |") for row in what_if.splitlines()[2:]
    )
    # Beside the full-window evidence, step by step.
    full_out = tmp_path / "full"
    config = replace(req.config, window=TINY_WINDOW)
    full = replace(req, config=config, window=TINY_WINDOW, split_window=False, out_dir=full_out)
    run_calibration(full, build_environment(full.config, layout), Recorder(), lambda: full.config)
    (full_written,) = full_out.glob("slots-*.json")
    rows = compare([str(full_written), str(written)], layout, req.config.bounds).rows()
    assert any("what-if:" in cell and "refused" in cell for row in rows for cell in row)
    assert not any("what-if:" in cell for row in rows for cell in row[1:2])


def test_a_split_window_sweep_needs_an_out_folder(tmp_path: Path, layout: StateLayout) -> None:
    req = request(tmp_path, split_window=True)
    with pytest.raises(BadInput, match="--split-window"):
        run_calibration(req, build_environment(req.config, layout), Recorder(), lambda: req.config)


def test_refusals_count_each_turns_first_answer() -> None:
    from tests.support.slot_builders import make_step

    refused = replace(answer(status=400, reason=None, error=REFUSED_OVER_WINDOW), prompt_tokens=700)
    step = make_step(0, 1, [answer("a"), refused, answer("b")])
    counted = refusals_of(step)
    assert (counted.served, counted.refused, counted.shortest_refused_tokens) == (2, 1, 700)


def test_the_cached_share_counts_served_turns_that_report_it() -> None:
    from tests.support.slot_builders import make_step
    from vibey_gh.slots.judging.truth.prefix_cache import cached_prompt_share

    warm = replace(answer("a"), prompt_tokens=100, cached_tokens=90)
    cold = replace(answer("b"), prompt_tokens=100, cached_tokens=0)
    silent = answer("c")
    refused = replace(answer(status=400, reason=None, error=REFUSED_OVER_WINDOW), cached_tokens=5)
    assert cached_prompt_share(make_step(0, 1, [warm, cold, silent, refused])) == 0.45
    assert cached_prompt_share(make_step(0, 1, [silent])) is None
