"""`slots compare`: sweeps side by side, what differs, --json, one overlaid plot; bad input."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from tests.support.evidence import RECORDED_FINGERPRINT, recorded_evidence, write_sealed
from tests.support.slot_builders import runs_loop
from vibey_gh.cli.main import cli
from vibey_gh.interfaces.schema import as_json
from vibey_gh.state import StateLayout

FIRST = RECORDED_FINGERPRINT
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def stored(fingerprint: str, change: Any = None) -> Path:
    """The recorded sweep, filed in the state dir under `fingerprint` (changed by `change`)."""
    data = recorded_evidence(change)
    assert data["fingerprint"]["id"] == fingerprint
    layout = StateLayout.from_env()
    layout.evidence.mkdir(parents=True, exist_ok=True)
    path = layout.evidence / f"{fingerprint}.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def after_upgrade(data: dict[str, Any]) -> None:
    data["fingerprint"]["fields"]["runner_version"] = "xllamacpp 2026.11.1"
    data["fingerprint"]["fields"]["window"] = 8192
    data["steps"] = data["steps"][:2]  # this sweep stopped after the one-slot runs


SECOND = recorded_evidence(after_upgrade)["fingerprint"]["id"]


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, ["slots", "compare", *args])


def test_two_sweeps_side_by_side_with_what_differs() -> None:
    stored(FIRST)
    stored(SECOND, after_upgrade)
    result = run(FIRST, SECOND)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["step", FIRST, SECOND]
    assert lines[1].startswith("N=1 ") and lines[2].startswith("N=1 again")
    n2 = lines[3].split("  ")
    assert n2[0] == "N=2" and "(no gain)" in lines[3] and lines[3].rstrip().endswith("—")
    assert lines[4].split() == ["decision", "ideal", "N", "=", "1", "ideal", "N", "=", "1"]
    assert any(line.startswith(f"{SECOND} against {FIRST}: ") for line in lines)
    differs = next(line for line in lines if line.startswith(f"{SECOND} against"))
    assert "window 4096 → 8192" in differs and "2026.11.1" in differs


def test_json_names_every_sweep_and_the_differences(tmp_path: Path) -> None:
    stored(FIRST)
    sent = tmp_path / "from-a-colleague.json"
    sent.write_text(stored(SECOND, after_upgrade).read_text(encoding="utf-8"))
    data = json.loads(run(FIRST, str(sent), "--json").stdout)
    assert [s["fingerprint"] for s in data["sweeps"]] == [FIRST, SECOND]
    assert [step["step"] for step in data["sweeps"][0]["steps"]] == ["N=1", "N=1 again", "N=2"]
    assert data["sweeps"][1]["path"] == str(sent)
    (difference,) = data["differences"]
    assert difference["against"] == FIRST and difference["of"] == sent.name
    assert "window 4096 → 8192" in difference["differs"]
    assert data["plot"] is None


@pytest.mark.plots
def test_the_overlaid_plot_is_a_png(tmp_path: Path) -> None:
    stored(FIRST)
    stored(SECOND, after_upgrade)
    target = tmp_path / "both.png"
    result = run(FIRST, SECOND, "--plot", str(target))
    assert result.exit_code == 0, result.output
    assert target.read_bytes().startswith(PNG_SIGNATURE)
    assert f"plot: {target}" in result.stdout
    import matplotlib.image

    assert matplotlib.image.imread(str(target)).shape[2] in (3, 4)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ([FIRST], "at least two"),
        ([FIRST, "fedcba9876543210"], "no evidence for fingerprint fedcba9876543210"),
        ([FIRST, "nothing-here.json"], "neither a fingerprint"),
        ([FIRST, "damaged.json"], "damaged.json: "),
    ],
)
def test_bad_input_is_one_line_and_exit_2(arguments: list[str], message: str) -> None:
    stored(FIRST)
    Path("damaged.json").write_text('{"kind": "vibey-gh-evidence", "schema_ver')
    result = run(*arguments)
    assert result.exit_code == 2
    assert result.stderr.startswith("error: ") and message in result.stderr
    assert result.stderr.count("\n") == 1


def test_a_plot_into_a_missing_folder_writes_nothing(tmp_path: Path) -> None:
    stored(FIRST)
    stored(SECOND, after_upgrade)
    result = run(FIRST, SECOND, "--plot", str(tmp_path / "missing" / "p.png"))
    assert result.exit_code == 2 and "no such folder" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_copied_or_edited_evidence_is_refused_by_compare(tmp_path: Path) -> None:
    stored(FIRST)
    second = stored(SECOND, after_upgrade)
    copy = second.with_name(f"{'f' * 16}.json")
    copy.write_bytes(second.read_bytes())
    result = run(FIRST, "f" * 16)
    assert result.exit_code != 0 and "copied from another fingerprint" in result.stderr
    edited = json.loads(second.read_text(encoding="utf-8"))
    edited["decision"]["ideal"] = 4
    sent = tmp_path / "edited.json"
    sent.write_text(json.dumps(edited), encoding="utf-8")
    result = run(FIRST, str(sent))
    assert result.exit_code != 0 and "evidence edited after it was recorded" in result.stderr


def test_a_plot_without_matplotlib_says_how_to_get_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import vibey_gh.slots.report.plotting.plots as plots

    monkeypatch.setattr(plots, "plots_available", lambda find_module=None: False)
    stored(FIRST)
    stored(SECOND, after_upgrade)
    result = run(FIRST, SECOND, "--plot", str(tmp_path / "p.png"))
    assert result.exit_code == 2
    assert "pip install 'vibey-gh[plots]'" in result.stderr
    assert result.stderr.rstrip().endswith("and run this command again")
    assert "vibey-gh this" not in result.stderr


def test_the_overlaid_plot_ticks_whole_slot_counts_only() -> None:
    from vibey_gh.config import LocalModels
    from vibey_gh.slots.report.compare import compare, overlaid_throughput_figure

    stored(FIRST)
    stored(SECOND, after_upgrade)
    comparison = compare([FIRST, SECOND], StateLayout.from_env(), LocalModels().bounds)
    (ax,) = overlaid_throughput_figure(comparison).get_axes()
    ticks = list(ax.get_xticks())
    assert ticks == [1, 2], "no N = 1.5"


def whole_runs(data: dict[str, Any]) -> None:
    """The recorded sweep's fingerprint, over a sweep of whole runs (tools as long as a turn)."""
    steps = [runs_loop(1, 60, think_s=1.0, index=i) for i in (0, 1)]
    steps.append(runs_loop(2, 60, think_s=1.0, index=2))
    data["steps"] = [as_json(s) for s in steps]
    data["corpus"]["shape"] = "runs"


def test_sweeps_of_whole_runs_are_compared_on_runs_per_hour(tmp_path: Path) -> None:
    first = write_sealed(tmp_path / "a.json", recorded_evidence(whole_runs))
    second = write_sealed(tmp_path / "b.json", recorded_evidence(whole_runs))
    result = run(str(first), str(second))
    assert result.exit_code == 0, result.output
    n2 = next(line for line in result.stdout.splitlines() if line.startswith("N=2 "))
    # two workers, each a run of 2 turns of 1 s after 1 s of tools: 2 / 4 s = 1800 runs/h
    # (paired: work done in the window over a run's reference cost, within half a percent)
    figures = [float(f) for f in re.findall(r"([0-9.]+) runs/h", n2)]
    assert len(figures) == 2 and all(abs(f / 1800.0 - 1) < 0.005 for f in figures)
    assert "turns/h" not in n2
    assert "Compared on runs/h, the figure every sweep was decided on." in result.stdout
    data = json.loads(run(str(first), str(second), "--json").stdout)
    assert data["compared_on"] == "runs/h"
    assert [s["decided_by"] for s in data["sweeps"]] == ["runs/h", "runs/h"]
    step = data["sweeps"][0]["steps"][2]
    assert step["compared"] == step["runs_per_hour"] == pytest.approx(1800.0, rel=0.005)
    assert step["turns_per_hour"] == pytest.approx(3600.0, rel=0.01)  # counted turns


def test_sweeps_decided_on_different_figures_are_compared_on_turns_and_say_so(
    tmp_path: Path,
) -> None:
    runs = write_sealed(tmp_path / "runs.json", recorded_evidence(whole_runs))
    stored(FIRST)
    result = run(str(runs), FIRST)
    assert result.exit_code == 0, result.output
    n1 = next(line for line in result.stdout.splitlines() if line.startswith("N=1 "))
    assert "runs/h" not in n1 and n1.count("turns/h") == 2
    assert (
        f"The sweeps were decided on different figures (runs.json on runs/h, {FIRST} on "
        "turns/h): compared on turns/h, which every sweep measured" in result.stdout
    )
    data = json.loads(run(str(runs), FIRST, "--json").stdout)
    assert data["compared_on"] == "turns/h"
    assert [s["decided_by"] for s in data["sweeps"]] == ["runs/h", "turns/h"]
    assert data["sweeps"][1]["steps"][0]["runs_per_hour"] is None
