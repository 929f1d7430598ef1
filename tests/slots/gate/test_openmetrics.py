"""`slots allowed --format openmetrics` and `--textfile`, read back by prometheus-client's
OpenMetrics parser (the one a scraper uses)."""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from prometheus_client.openmetrics.parser import text_string_to_metric_families
from test_allowed import NOW, config, deps_for, good_sweep, record

from vibey_gh.cli.main import cli
from vibey_gh.slots.gate.allowed import decide_allowed
from vibey_gh.slots.gate.openmetrics import MetricLabels, openmetrics_text

LABELS = MetricLabels("0123456789abcdef", "ollama", "gpt-oss:20b", "65536")


def parsed(text: str) -> dict[str, tuple[dict[str, str], float]]:
    """Every sample by metric name; the parser raises on anything a scraper would refuse."""
    found: dict[str, tuple[dict[str, str], float]] = {}
    for family in text_string_to_metric_families(text):
        assert family.type == "gauge"
        for sample in family.samples:
            found[sample.name] = (sample.labels, sample.value)
    return found


def test_an_answer_from_evidence_gives_every_gauge(tmp_path: Path) -> None:
    record(tmp_path, good_sweep(), age_days=2.5)
    answer = decide_allowed(config("measured"), deps=deps_for(tmp_path))
    samples = parsed(openmetrics_text(answer, LABELS))
    assert samples["vibey_gh_slots_allowed"] == (
        {
            "fingerprint": "0123456789abcdef",
            "runner": "ollama",
            "model": "gpt-oss:20b",
            "window": "65536",
        },
        2.0,
    )
    assert samples["vibey_gh_slots_ideal"][1] == 2.0
    assert samples["vibey_gh_evidence_age_seconds"][1] == pytest.approx(2.5 * 86_400)
    assert samples["vibey_gh_calibration_requested"][1] == 0.0
    assert answer.to_json()["evidence_age_seconds"] == pytest.approx(2.5 * 86_400)
    assert NOW > 0


def test_without_evidence_ideal_and_age_are_left_out_and_the_request_shows(
    tmp_path: Path,
) -> None:
    answer = decide_allowed(config("measured"), deps=deps_for(tmp_path))
    samples = parsed(openmetrics_text(answer, LABELS))
    assert set(samples) == {"vibey_gh_slots_allowed", "vibey_gh_calibration_requested"}
    assert samples["vibey_gh_calibration_requested"][1] == 1.0
    assert samples["vibey_gh_slots_allowed"][1] == 1.0


def test_label_values_are_escaped(tmp_path: Path) -> None:
    answer = decide_allowed(config(1), deps=deps_for(tmp_path))
    odd = MetricLabels("", "ollama", 'we"ird\\name\nx', "4096")
    labels, _ = parsed(openmetrics_text(answer, odd))["vibey_gh_slots_allowed"]
    assert labels["model"] == 'we"ird\\name\nx'


def invoke(*args: str) -> object:
    return CliRunner().invoke(cli, ["slots", "allowed", *args], prog_name="vibey-gh")


def test_the_command_prints_parseable_gauges_with_the_config_s_labels() -> None:
    Path("vibey-gh.toml").write_text('[local_models]\nwindow = 8192\nmodel = "m"\n')
    result = CliRunner().invoke(cli, ["slots", "allowed", "--format", "openmetrics"])
    assert result.exit_code == 0, result.output
    assert result.stdout.endswith("# EOF\n")
    labels, value = parsed(result.stdout)["vibey_gh_slots_allowed"]
    assert value == 1.0
    assert labels == {"fingerprint": "", "runner": "embedded", "model": "m", "window": "8192"}


def test_a_broken_config_still_gives_gauges() -> None:
    Path("vibey-gh.toml").write_text('[local_models]\nconcurrent_runs = "measurd"\n')
    result = CliRunner().invoke(cli, ["slots", "allowed", "--format", "openmetrics"])
    assert result.exit_code == 0, result.output
    assert parsed(result.stdout)["vibey_gh_slots_allowed"][1] == 1.0


def test_textfile_is_written_whole_and_readable_by_the_collector(tmp_path: Path) -> None:
    folder = tmp_path / "textfile"
    folder.mkdir(mode=0o755)
    target = folder / "vibey-gh.prom"
    target.write_text("old\n")
    result = CliRunner().invoke(cli, ["slots", "allowed", "--textfile", str(target)])
    assert result.exit_code == 0, result.output
    assert result.stdout == "1 — declared 1 (concurrent_runs = 1)\n"
    assert parsed(target.read_text())["vibey_gh_slots_allowed"][1] == 1.0
    assert stat.S_IMODE(target.stat().st_mode) == 0o644
    assert stat.S_IMODE(folder.stat().st_mode) == 0o755  # someone else's folder: left as it is
    assert [p.name for p in folder.iterdir()] == ["vibey-gh.prom"]


@pytest.mark.parametrize(
    ("where", "problem"), [("missing/x.prom", "no such folder"), ("d", "is a folder")]
)
def test_an_unusable_textfile_is_one_warning_and_the_answer(
    tmp_path: Path, where: str, problem: str
) -> None:
    (tmp_path / "d").mkdir()
    target = tmp_path / where
    result = CliRunner().invoke(cli, ["slots", "allowed", "--textfile", str(target)])
    assert result.exit_code == 0  # the gate always answers
    assert result.stdout == "1 — declared 1 (concurrent_runs = 1)\n"
    assert result.stderr.startswith(f"warning: --textfile {target} was not written (")
    assert problem in result.stderr and result.stderr.count("\n") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d"]
    assert list((tmp_path / "d").iterdir()) == []


def test_json_and_openmetrics_together_are_a_usage_error() -> None:
    result = CliRunner().invoke(cli, ["slots", "allowed", "--json", "--format", "openmetrics"])
    assert result.exit_code == 2
    assert "two formats" in result.stderr


def _refuse(code: int) -> Callable[..., Any]:
    def refuse(*_args: Any) -> Any:
        raise OSError(code, os.strerror(code))

    return refuse


@pytest.mark.parametrize(
    ("where", "code"),
    [("_create_temp_beside", errno.EROFS), ("fsync_durably", errno.ENOSPC)],
    ids=["read-only file system", "full file system"],
)
def test_a_file_system_that_refuses_the_textfile_still_gets_the_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str, code: int
) -> None:
    # A read-only or full file system cannot be made here without privileges: the write
    # fails where the real one does (creating the temporary file; flushing it to disk).
    import vibey_gh.platforms.storage.atomic_files

    monkeypatch.setattr(vibey_gh.platforms.storage.atomic_files, where, _refuse(code))
    target = tmp_path / "vibey-gh.prom"
    target.write_text("old\n")
    result = CliRunner().invoke(cli, ["slots", "allowed", "--textfile", str(target)])
    assert result.exit_code == 0, result.output
    assert result.stdout == "1 — declared 1 (concurrent_runs = 1)\n"
    assert result.stderr == (
        f"warning: --textfile {target} was not written ({os.strerror(code)}); "
        "the answer is unaffected\n"
    )
    assert target.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["vibey-gh.prom"]
