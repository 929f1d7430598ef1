"""`vibey-gh slots show`: today's evidence, the others, and what happens when things are missing."""

from __future__ import annotations

import io
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result
from rich.console import Console

from tests.support.clocks import ManualClock
from tests.support.evidence import RECORDED, RECORDED_FINGERPRINT, recorded_evidence
from vibey_gh.config import LocalModels
from vibey_gh.errors import RunnerError
from vibey_gh.files import atomic_write_json
from vibey_gh.interfaces.slots_interface import DeviceFacts, RunnerInfo
from vibey_gh.slots.evidence.fingerprint import compute_fingerprint
from vibey_gh.slots.evidence.store import load_evidence
from vibey_gh.slots.gate.allowed import AllowedDeps
from vibey_gh.slots.report.show import gather_show
from vibey_gh.slots.report.terminal.show_text import render_answer
from vibey_gh.state import StateLayout

FP = RECORDED_FINGERPRINT
RECORDED_AT = 1_796_009_900.0
# two days after the recorded sweep
SHOWN_AT = RECORDED_AT + 2 * 86_400.0
# The device and runner the recorded sweep ran on: today's fingerprint is the recorded one.
DEVICE = DeviceFacts(None, "AMD EPYC", 25_276_510_208, (), "Debian GNU/Linux", "12")
RUNNER = RunnerInfo(
    "embedded",
    "xllamacpp 2026.10.11549",
    "SmolLM2-135M-Instruct.Q4_1.gguf",
    "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
)


def install_recorded(root: Path) -> Path:
    target = StateLayout(root).evidence / f"{FP}.json"
    shutil.copyfile(RECORDED, target)
    return target


def install_other(root: Path, runner_version: str = "xllamacpp 2026.09.1") -> str:
    """The recorded sweep as if measured on an older runner: another fingerprint."""

    def older_runner(data: dict[str, Any]) -> None:
        data["fingerprint"]["fields"]["runner_version"] = runner_version

    data = recorded_evidence(older_runner)
    path = StateLayout(root).evidence / f"{data['fingerprint']['id']}.json"
    atomic_write_json(path, data)
    return str(data["fingerprint"]["id"])


def identify_as(runner: RunnerInfo = RUNNER, answering: bool = True) -> Any:
    def identify(_config: LocalModels) -> RunnerInfo:
        if not answering:
            raise RunnerError("production runner at http://127.0.0.1:8080 does not answer")
        return runner

    return identify


def deps_for(root: Path, runner: RunnerInfo = RUNNER, answering: bool = True) -> AllowedDeps:
    return AllowedDeps(
        StateLayout(root),
        ManualClock(epoch=SHOWN_AT),
        lambda: DEVICE,
        identify_as(runner, answering),
    )


ShowCli = Callable[..., Result]


@pytest.fixture
def show(run_cli: ShowCli, isolated_state: Path) -> ShowCli:
    """`slots show ARGS` on the recorded device and runner, two days after the recording."""

    def run(*args: str, answering: bool = True) -> Result:
        return run_cli(
            ["slots", "show", *args],
            layout=lambda: StateLayout(isolated_state),
            clock=ManualClock(epoch=SHOWN_AT),
            device=lambda: DEVICE,
            identify_production=identify_as(answering=answering),
        )

    return run


def test_the_fixture_is_todays_fingerprint() -> None:
    assert compute_fingerprint(DEVICE, RUNNER, 4096).id == FP


def test_shows_todays_table_verdicts_ideal_and_files(isolated_state: Path, show: ShowCli) -> None:
    evidence = install_recorded(isolated_state)
    result = show("--format", "markdown")
    assert result.exit_code == 0, result.output
    out = result.output
    assert f"evidence {FP} (today's fingerprint)" in out
    assert "2.0 days old" in out and "STALE" not in out
    assert "| N=1 again | 1 × 4,096 | 16 (corpus 16) | 1025.7 |" in out
    assert "\n- N=2 no gain\n" in out, "a gain without its interval is not printed"
    assert "ideal N = 1 — one:" in out
    assert str(evidence) in out
    assert "--report` writes it" in out


@pytest.mark.plots
def test_report_flag_writes_the_report_and_plots_beside_the_evidence(
    isolated_state: Path, show: ShowCli
) -> None:
    evidence = install_recorded(isolated_state)
    result = show("--report")
    assert result.exit_code == 0, result.output
    folder = evidence.parent
    for name in ("report.md", "throughput.png", "latency.png", "memory.png", "fidelity.png"):
        path = folder / f"{FP}-{name}"
        assert path.is_file(), name
        assert str(path) in result.output
    assert "--report` writes it" not in result.output


def test_json_has_the_rows_verdicts_and_others(isolated_state: Path, show: ShowCli) -> None:
    install_recorded(isolated_state)
    other = install_other(isolated_state)
    result = show("--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["fingerprint"] == FP and data["today"]["id"] == FP
    shown = data["evidence"]
    assert shown["ideal"] == 1 and shown["stale"] is False
    assert data["schema_version"] == 4
    assert "rows" not in shown and "columns" not in shown  # typed data only
    assert [step["name"] for step in shown["steps"]] == ["N=1", "N=1 again", "N=2"]
    first = shown["steps"][0]
    assert isinstance(first["turns_per_hour"], float) and isinstance(first["served_turns"], int)
    assert shown["verdict_code"] == "no_gain"
    assert [v["label"] for v in shown["verdicts"]] == ["floor", "baseline", "no gain"]
    # evidence from before whole runs: segments, decided on turns per hour, no run figures
    assert shown["decided_by"] == "turns/h"
    assert {(v["decided_by"], v["runs_per_hour"]) for v in shown["verdicts"]} == {("turns/h", None)}
    assert shown["differences_from_today"] == []
    assert [o["fingerprint"] for o in data["others"]] == [other]
    assert data["others"][0]["differences"] == [
        "runner xllamacpp 2026.09.1 → xllamacpp 2026.10.11549"
    ]


def test_no_evidence_at_all_is_said_and_exits_zero(isolated_state: Path, show: ShowCli) -> None:
    result = show()
    assert result.exit_code == 0
    assert f"no evidence for today's fingerprint {FP}" in result.output
    assert "no evidence in the state dir" in result.output


@pytest.mark.parametrize(
    ("args", "kind"), [(("--format", "csv"), "CSV"), (("--html", "report.html"), "HTML")]
)
def test_no_evidence_to_write_says_how_to_get_some(
    isolated_state: Path, show: ShowCli, tmp_path: Path, args: tuple[str, ...], kind: str
) -> None:
    if args[0] == "--html":
        args = ("--html", str(tmp_path / "report.html"))
    result = show(*args)
    assert result.exit_code == 1
    assert f"no evidence to write as {kind}: `vibey-gh slots calibrate` records it" in (
        result.output + (result.stderr or "")
    )
    assert "its FINGERPRINT (`vibey-gh slots show` lists it)" in result.output + (
        result.stderr or ""
    )
    assert not (tmp_path / "report.html").exists()


def test_other_fingerprints_are_listed_with_what_differs(
    isolated_state: Path, show: ShowCli
) -> None:
    other = install_other(isolated_state)
    result = show()
    assert result.exit_code == 0
    assert f"no evidence for today's fingerprint {FP}" in result.output
    assert f"  {other}  measured 2026-11-30" in result.output
    assert "differs: runner xllamacpp 2026.09.1 → xllamacpp 2026.10.11549" in result.output


def test_production_not_answering_still_lists_the_evidence(
    isolated_state: Path, show: ShowCli
) -> None:
    install_recorded(isolated_state)
    result = show(answering=False)
    assert result.exit_code == 0
    assert "today's fingerprint cannot be computed: production runner" in result.output
    assert f"  {FP}  measured" in result.output
    assert "what differs is unknown" in result.output


def test_a_given_fingerprint_shows_that_evidence_and_its_differences(
    isolated_state: Path, show: ShowCli
) -> None:
    install_recorded(isolated_state)
    other = install_other(isolated_state)
    result = show("--fingerprint", other.upper())
    assert result.exit_code == 0, result.output
    assert f"evidence {other} — measured" in result.output
    assert "differs from today: runner xllamacpp 2026.09.1 → xllamacpp 2026.10.11549" in (
        result.output
    )
    assert f"  {FP}  measured" in result.output  # today's is now among the others


def test_a_given_fingerprint_without_evidence_exits_one(
    isolated_state: Path, show: ShowCli
) -> None:
    result = show("--fingerprint", "0000000000000000")
    assert result.exit_code == 1
    assert "no evidence for fingerprint 0000000000000000; run `vibey-gh slots calibrate`" in (
        result.output
    )


@pytest.mark.parametrize("bad", ["xyz", "a6e718b9b4a7bd4", "a6e718b9b4a7bd46a", "../../etc"])
def test_a_malformed_fingerprint_is_bad_input(
    isolated_state: Path, bad: str, show: ShowCli
) -> None:
    result = show("--fingerprint", bad)
    assert result.exit_code == 2
    assert "--fingerprint takes 16 hex digits" in result.output


def test_an_unreadable_evidence_file_is_listed_not_fatal(
    isolated_state: Path, show: ShowCli
) -> None:
    install_recorded(isolated_state)
    broken = StateLayout(isolated_state).evidence / "ffffffffffffffff.json"
    broken.write_text("{ not json")
    result = show()
    assert result.exit_code == 0
    assert "ffffffffffffffff  measured unknown time  unreadable:" in result.output
    assert broken.read_text() == "{ not json"


def test_unreadable_evidence_asked_for_by_fingerprint_exits_one(
    isolated_state: Path, show: ShowCli
) -> None:
    broken = StateLayout(isolated_state).evidence / "ffffffffffffffff.json"
    broken.write_text("[]")
    result = show("--fingerprint", "ffffffffffffffff")
    assert result.exit_code == 1
    assert "does not hold a JSON object" in result.output


def test_stale_evidence_is_marked(isolated_state: Path, show: ShowCli) -> None:
    install_recorded(isolated_state)
    answer = gather_show(config=LocalModels(stale_after_days=1.0), deps=deps_for(isolated_state))
    assert answer.shown is not None and answer.shown.stale


def rendered(width: int, markdown: bool, root: Path) -> str:
    install_recorded(root)
    answer = gather_show(config=LocalModels(), deps=deps_for(root))
    buffer = io.StringIO()
    console = Console(file=buffer, width=width, highlight=False, color_system=None)
    render_answer(answer, console, markdown=markdown)
    return buffer.getvalue()


def test_terminal_table_is_wide_when_it_fits(isolated_state: Path) -> None:
    text = rendered(200, False, isolated_state)
    header = next(line for line in text.splitlines() if "turns/h" in line)
    assert "slots × window" in header and "verdict" in header
    assert "1.0k" in text and "…" not in text


def test_terminal_table_fits_80_columns_and_names_what_it_left_out(isolated_state: Path) -> None:
    text = rendered(80, False, isolated_state)
    lines = text.splitlines()
    header = next(line for line in lines if "turns/h" in line)
    assert "verdict" in header and "fidelity" in header
    assert max(len(line) for line in lines if "(not shown" not in line and "/" not in line) <= 80
    table = lines[lines.index(header) : lines.index(header) + 5]
    assert all(len(line) <= 80 for line in table), "every row of the table fits"
    assert any("(not shown at this width:" in line for line in lines)
    assert "…" not in "\n".join(table)


def test_markdown_format_is_the_reports_table(isolated_state: Path) -> None:
    text = rendered(80, True, isolated_state)
    assert "| step | slots × window | turns served | turns/h |" in text


def test_loaded_fixture_is_the_one_the_cli_shows(isolated_state: Path) -> None:
    path = install_recorded(isolated_state)
    assert load_evidence(path).fingerprint == FP


def test_what_each_steps_runner_reported_is_shown_and_judged(
    isolated_state: Path, show: ShowCli
) -> None:
    reported = [(1, 4096), (1, 4096), (1, 4096)]  # the N=2 runner served one slot

    def as_reported(data: dict[str, Any]) -> None:
        for step, (slots, window) in zip(data["steps"], reported, strict=True):
            step["runner_reported"] = {"slots": slots, "window": window, "kv_cache_bytes": 96 << 20}

    evidence = StateLayout(isolated_state).evidence / f"{FP}.json"
    atomic_write_json(evidence, recorded_evidence(as_reported))  # as the writer records it
    result = show()
    assert result.exit_code == 0, result.output
    assert "runner reported at start-up:" in result.output
    assert "  N=1 again  1 slot(s) × 4096 tokens, KV cache 96.0 MiB" in result.output
    assert "  N=2        breaks runner setup — runner reported 1 slot(s), not the 2" in (
        result.output
    )
    shown = json.loads(show("--json").output)["evidence"]
    assert shown["verdicts"][2]["runner_reported"]["slots"] == 1


def test_evidence_without_runner_reports_shows_no_such_lines(
    isolated_state: Path, show: ShowCli
) -> None:
    install_recorded(isolated_state)
    result = show()
    assert result.exit_code == 0 and "runner reported" not in result.output
    shown = json.loads(show("--json").output)["evidence"]
    assert [v["runner_reported"] for v in shown["verdicts"]] == [None, None, None]


def test_csv_has_one_row_per_step_with_numbers(isolated_state: Path, show: ShowCli) -> None:
    import csv

    install_recorded(isolated_state)
    result = show("--format", "csv")
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.output)))
    assert [row["name"] for row in rows] == ["N=1", "N=1 again", "N=2"]
    assert float(rows[1]["turns_per_hour"]) == pytest.approx(1025.7, abs=0.05)
    assert rows[2]["verdict"] == "no gain" and rows[2]["ideal"] == "False"
    # TTFT, TPOT and ITL, each as mean, p50, p90, p95 and p99: empty for turns unstreamed
    latency = [f"{w}_{k}" for w in ("ttft", "tpot", "itl") for k in ("mean_s", "p50_s", "p99_s")]
    assert all(row[key] == "" for row in rows for key in latency)
    # how long each step took, start to end, and its measured part
    assert all(float(row["duration_s"]) >= float(row["measured_s"]) > 0 for row in rows)
    # pp and tg: the recorded sweep kept no runner timings, said so, never 0
    assert {(row["pp_tokens_per_s"], row["tg_why_none"]) for row in rows} == {("", "not recorded")}


def test_the_fingerprint_may_be_given_as_compare_takes_it(
    isolated_state: Path, show: ShowCli
) -> None:
    install_recorded(isolated_state)
    other = install_other(isolated_state)
    result = show(other, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["evidence"]["fingerprint"] == other
    clash = show(other, "--fingerprint", FP)
    assert clash.exit_code == 2 and "give the fingerprint once" in clash.stderr
    both = show("--json", "--format", "csv")
    assert both.exit_code == 2 and "ask for two formats" in both.stderr


def test_the_ideal_n_is_marked_in_the_terminal_table(isolated_state: Path) -> None:
    from vibey_gh.slots.report.tables.step_table import step_views

    install_recorded(isolated_state)
    answer = gather_show(config=LocalModels(), deps=deps_for(isolated_state))
    assert answer.shown is not None
    views = step_views(answer.shown.evidence.steps, answer.shown.judgement)
    assert not any(view.ideal for view in views), "ideal 1 by default marks no step"
    text = rendered(120, False, isolated_state)
    assert "◀ ideal" not in text


def test_no_report_is_missing_for_plots_this_install_cannot_draw(
    isolated_state: Path, show: ShowCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    import vibey_gh.slots.report.plotting.plots as plots

    monkeypatch.setattr(plots, "plots_available", lambda find_module=None: False)
    install_recorded(isolated_state)
    written = show("--report")
    assert written.exit_code == 0, written.output
    again = show()
    assert "no full report yet" not in again.output


def test_history_lists_the_replaced_sweeps_of_todays_fingerprint(
    isolated_state: Path, show: ShowCli
) -> None:
    from vibey_gh.slots.evidence.history import keep_in_history, summarise

    layout = StateLayout(isolated_state)
    raw = RECORDED.read_bytes()
    kept = keep_in_history(layout, FP, raw, summarise(raw, RECORDED))
    assert show("--history").output == show("--history", "--fingerprint", FP).output
    result = show("--history")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == f"{FP}: 1 replaced sweep(s) kept, newest first"
    assert lines[1].startswith("  the sweep of 2026-") and lines[1].endswith(f": {kept}")
    listed = json.loads(show("--history", "--json").output)
    assert [entry["path"] for entry in listed[FP]] == [str(kept)]
    assert listed[FP][0]["usable"] is True


def test_history_lists_the_kept_soaks_beside_the_sweeps(
    isolated_state: Path, show: ShowCli
) -> None:
    from vibey_gh.slots.evidence.soak_file import soak_path
    from vibey_gh.slots.evidence.soak_history import record_soak_file

    layout = StateLayout(isolated_state)
    fields = json.loads(RECORDED.read_text())["fingerprint"]["fields"]
    soak = {
        "fingerprint": {"id": FP, "fields": fields}, "slots": 2, "measured_s": 600.0,
        "complete": True, "judgement": {"verdict": "holds", "holds": True},
    }  # fmt: skip
    path = soak_path(layout, FP, 2)
    record_soak_file(layout, path, FP, 2, {**soak, "created_at": 1.0e9})
    kept = record_soak_file(layout, path, FP, 2, {**soak, "created_at": 2.0e9}).kept
    lines = show("--history").output.splitlines()
    assert lines[1] == f"{FP}: 1 soak(s) kept, newest first"
    assert lines[2].startswith("  the soak of 2001-09-09") and lines[2].endswith(f": {kept}")
    (entry,) = json.loads(show("--history", "--json").output)[FP]
    assert (entry["kind"], entry["slots"], entry["path"]) == ("soak", 2, str(kept))


def test_history_without_any_says_so(isolated_state: Path, show: ShowCli) -> None:
    result = show("--history")
    assert result.exit_code == 0
    assert result.output == f"no replaced sweep kept for {FP}\n"
