"""A soak in `slots show`, its Markdown report and its plot, from a soak file."""

from __future__ import annotations

import pytest

from tests.slots.evidence.test_soak_file import FINGERPRINT, _data
from vibey_gh.interfaces.schema import as_json
from vibey_gh.slots.evidence.soak_file import load_soak, soak_path, write_soak
from vibey_gh.slots.report.soak_view import SoakView, lines, soak_views, write_soak_report
from vibey_gh.state import StateLayout


def _window(at: float, rate: float, temp: float | None, watts: float | None) -> dict:
    readings = {"runner.rss_bytes": {"mean": 2e9, "max": 2.1e9}}
    if temp is not None:
        readings["gpu0.temperature_c"] = {"mean": temp, "max": temp + 1}
    if watts is not None:
        readings["gpu0.power_w"] = {"mean": watts, "max": watts + 5}
    return {"at_s": at, "length_s": 600.0, "units": 100, "throughput": rate, "se": 20.0,
            "batches": 10, "readings": readings}  # fmt: skip


def _write(layout: StateLayout, with_sensors: bool) -> SoakView:
    data = _data()
    data["series"] = [
        _window(i * 600.0, 1000.0 - 50 * i, 60 + 5 * i if with_sensors else None,
                300.0 if with_sensors else None)
        for i in range(6)
    ]  # fmt: skip
    data["readings"] = {
        "units": {"runner.rss_bytes": "B", "gpu0.temperature_c": "C", "gpu0.power_w": "W"},
        "missing": {} if with_sensors else {"gpu.sensors": "nvidia-smi not found"},
    }
    data["judgement"] = {
        "verdict": "drifted", "holds": False,
        "reasons": ["throughput fell: last window at 75% of the first (70%–80%), below 90%"],
        "trend_per_hour": {"slope": -0.05, "low": -0.07, "high": -0.03},
    }  # fmt: skip
    path = soak_path(layout, FINGERPRINT.id, 2)
    write_soak(path, data)
    return SoakView(path, load_soak(path))


def test_show_says_the_verdict_why_the_trend_and_the_readings(layout: StateLayout) -> None:
    said = lines(_write(layout, with_sensors=True))
    assert said[0] == "soak at N=2, 10m: DRIFTED"
    assert "throughput fell" in said[1]
    assert "  throughput trend: -5.0 %/h (-7.0 to -3.0 %/h) of the first window" in said
    assert "  gpu0.temperature_c: 60.0 C → 85.0 C (peak 86.0 C)" in said
    (view,) = soak_views(layout, FINGERPRINT.id)
    assert as_json(view.shown())["judgement"]["verdict"] == "drifted"


def test_readings_not_read_are_said_with_why(layout: StateLayout) -> None:
    said = lines(_write(layout, with_sensors=False))
    assert "  gpu.sensors: not read (nvidia-smi not found)" in said


@pytest.mark.parametrize("with_sensors", [True, False])
def test_the_report_and_its_plot_are_written_beside_the_soak(
    layout: StateLayout, with_sensors: bool
) -> None:
    pytest.importorskip("matplotlib")
    view = _write(layout, with_sensors)
    report, plot = write_soak_report(view, plotting=True)
    assert report == view.report_path and plot == view.plot_path
    assert plot.read_bytes().startswith(b"\x89PNG")
    text = report.read_text()
    assert f"![throughput, temperature and power over the soak]({plot.name})" in text
    assert "| 50m | 100 | 750 | ± 20 |" in text


def test_show_says_when_the_soak_judged_again_differs_from_its_record(
    layout: StateLayout,
) -> None:
    path = soak_path(layout, FINGERPRINT.id, 2)
    write_soak(path, _data())  # it says it held, but has no windows to hold on
    said = lines(SoakView(path, load_soak(path)))
    assert said[0] == "soak at N=2, 10m: UNJUDGED"
    assert said[1] == "  its windows cannot be read: no window length (recorded: holds)"


def test_a_trend_too_wide_to_tell_says_so_and_how_long_would_decide() -> None:
    """A 1-minute soak: "-0.0 %/h (-497.0 to +497.0 %/h)" alone told nothing."""
    from vibey_gh.slots.report.soak_view import trend_text

    wide = {"slope": -0.0001, "low": -4.97, "high": 4.97}
    said = trend_text(wide, measured_s=60.0, window_s=20.0)
    assert said.startswith("undecided (-0.0 %/h (-497.0 to +497.0 %/h)): too short to tell; ")
    # the interval narrows as time^1.5: 497 → 10 %/h wants (49.7)^(2/3) ≈ 13.5 × a minute
    assert said.endswith("a soak of at least 14m would decide it")
    assert trend_text({"slope": -0.05, "low": None, "high": None}, 120.0, 60.0) == (
        "undecided: too few windows for a trend; a soak of at least 3m would decide it"
    )
    narrow = {"slope": -0.05, "low": -0.07, "high": -0.03}
    assert trend_text(narrow, 3600.0, 600.0) == "-5.0 %/h (-7.0 to -3.0 %/h) of the first window"


def test_a_soak_judged_again_as_it_was_recorded_says_no_more(layout: StateLayout) -> None:
    # throughput fell to a quarter: recorded drifted, and drifted again when re-read
    ends = [i * 0.1 for i in range(6000)] + [600 + i * 0.4 for i in range(1500)]
    data = {**_data(), "window_s": 100.0, "spans": [{"start": 0.0, "end": 1200.0, "ends": ends}]}
    data["judgement"] = {"verdict": "drifted", "holds": False, "reasons": ["throughput fell"]}
    path = soak_path(layout, FINGERPRINT.id, 2)
    write_soak(path, data)
    said = lines(SoakView(path, load_soak(path)))
    assert said[:2] == ["soak at N=2, 10m: DRIFTED", "  throughput fell"]
    assert not any("recorded:" in line for line in said)
