"""What people read of a soak: its verdict and why, the trend, the readings over time.

The same words go to `slots show` (`lines`), the soak's Markdown report (`soak_markdown`,
written beside the soak file with its plot) and `--json` (`SoakView.shown`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import msgspec

from ...files import atomic_write_text
from ...interfaces.durations import format_duration
from ...state import StateLayout
from ..evidence.soak_file import SoakRecord, soaks_for
from .plotting.soak_plot import write_soak_plot

REPORT_SUFFIX = "-report.md"
PLOT_SUFFIX = "-soak.png"
# the readings a person asks about first: temperatures, power, clocks, memory
SHOWN_PREFIXES = ("thermal.", "gpu", "cpu.", "runner.rss_bytes", "host.free_share")


class SoakView(msgspec.Struct, frozen=True):
    path: Path
    record: SoakRecord | None
    problem: str | None = None

    @property
    def report_path(self) -> Path:
        return self.path.with_name(self.path.stem + REPORT_SUFFIX)

    @property
    def plot_path(self) -> Path:
        return self.path.with_name(self.path.stem + PLOT_SUFFIX)

    def shown(self) -> ShownSoak | SoakProblem:
        """The soak file and the report and plot beside it, where they exist (`--json`)."""
        if self.record is None:
            return SoakProblem(self.path, self.problem)
        record = self.record
        return ShownSoak(
            self.path, record.slots, record.measured_s, record.created_at,
            record.data.get("complete"), dict(record.judgement), record.series,
            record.data.get("readings"),
            self.report_path if self.report_path.exists() else None,
            self.plot_path if self.plot_path.exists() else None,
        )  # fmt: skip


class SoakProblem(msgspec.Struct, frozen=True):
    """A soak file that does not read, in `show --json` (written by `as_json`)."""

    path: Path
    problem: str | None


class ShownSoak(msgspec.Struct, frozen=True):
    """A soak in `show --json` (written by `as_json`): as recorded, with its report and plot."""

    path: Path
    slots: int
    measured_s: float
    created_at: float
    complete: object
    judgement: dict[str, Any]
    series: list[Mapping[str, Any]]
    readings: object
    report: Path | None
    plot: Path | None


def soak_views(layout: StateLayout, fingerprint: str) -> list[SoakView]:
    return [
        SoakView(path, found) if isinstance(found, SoakRecord) else SoakView(path, None, found)
        for path, found in soaks_for(layout, fingerprint)
    ]


def _interval(values: Mapping[str, Any] | None, scale: float = 1.0, unit: str = "") -> str:
    if not values:
        return "unknown"
    low, high = values.get("low"), values.get("high")
    point = f"{values.get('slope', values.get('value', 0)) * scale:+.1f}{unit}"
    if low is None or high is None:
        return point
    return f"{point} ({low * scale:+.1f} to {high * scale:+.1f}{unit})"


# a throughput trend is decided once its interval is this narrow either side (% per hour)
TREND_DECIDED_PCT_PER_H = 10.0


def trend_text(trend: Mapping[str, Any] | None, measured_s: float, window_s: float) -> str:
    """The throughput trend, or, while its interval is too wide to tell (a short soak), that
    it is undecided and how long a soak would decide it: the interval of a slope narrows as
    the measured time to the power 1.5 (more windows, further apart)."""
    shown = _interval(trend, 100.0, " %/h")
    low, high = (trend or {}).get("low"), (trend or {}).get("high")
    if trend and low is not None and high is not None:
        half = (high - low) / 2.0 * 100.0
        if half <= TREND_DECIDED_PCT_PER_H:
            return shown + " of the first window"
        wanted = measured_s * (half / TREND_DECIDED_PCT_PER_H) ** (2.0 / 3.0)
        said = f"undecided ({shown}): too short to tell"
    else:
        wanted = 3 * window_s  # three windows give a slope an interval
        said = "undecided: too few windows for a trend"
    wanted = math.ceil(max(wanted, measured_s + window_s) / 60.0) * 60.0
    return f"{said}; a soak of at least {format_duration(wanted)} would decide it"


def _unit_value(value: float, unit: str) -> str:
    if unit == "B":
        return f"{value / 1e9:.2f} GB"
    if unit == "":
        return f"{value:.2f}"
    return f"{value:.1f} {unit}"


def reading_rows(record: SoakRecord) -> list[tuple[str, str, str, str]]:
    """(reading, first window's mean, last window's mean, peak), for the readings shown."""
    series = record.series
    info = record.data.get("readings") or {}
    units: Mapping[str, str] = info.get("units", {}) if isinstance(info, dict) else {}
    if not series:
        return []
    names = sorted(
        {name for w in series for name in w.get("readings", {})}
        & {n for n in [*units, "host.free_share"] if n.startswith(SHOWN_PREFIXES)}
    )
    rows = []
    for name in names:
        first = series[0].get("readings", {}).get(name)
        last = series[-1].get("readings", {}).get(name)
        peak = max((w["readings"][name]["max"] for w in series if name in w.get("readings", {})),
                   default=None)  # fmt: skip
        unit = units.get(name, "")
        rows.append((
            name,
            _unit_value(first["mean"], unit) if first else "—",
            _unit_value(last["mean"], unit) if last else "—",
            _unit_value(peak, unit) if peak is not None else "—",
        ))  # fmt: skip
    return rows


def lines(view: SoakView) -> list[str]:
    """The soak in a few lines for `slots show`."""
    if view.record is None:
        return [f"soak {view.path.name}: unusable ({view.problem})"]
    record = view.record
    judgement = record.judgement
    judged = record.judged()
    verdict = "HOLDS" if judged.holds else judged.verdict.upper()
    out = [
        f"soak at N={record.slots}, {format_duration(record.measured_s)}: {verdict}",
        *(
            # said only where the verdict judged again differs from the one recorded
            [f"  {judged.rejudged} (recorded: {record.recorded_verdict})"]
            if judged.rejudged and judged.verdict != record.recorded_verdict
            else []
        ),
        *(f"  {reason}" for reason in judgement.get("reasons", [])),
        "  throughput trend: "
        + trend_text(
            judgement.get("trend_per_hour"),
            record.measured_s,
            float(record.data.get("window_s") or 60.0),
        ),
    ]
    rss = judgement.get("rss_per_hour")
    if rss:
        out.append("  runner memory: " + _interval(rss, 1e-6, " MB/h"))
    for name, first, last, peak in reading_rows(record):
        out.append(f"  {name}: {first} → {last} (peak {peak})")
    missing = (record.data.get("readings") or {}).get("missing") or {}
    for name, why in sorted(missing.items()):
        out.append(f"  {name}: not read ({why})")
    for unjudged in judgement.get("unjudged", []):
        out.append(f"  {unjudged}")
    return out


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    return [
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
        *("| " + " | ".join(row) + " |" for row in rows),
    ]


def soak_markdown(view: SoakView, plot_name: str | None) -> str:
    assert view.record is not None
    record = view.record
    out = [f"# Soak at N={record.slots}: fingerprint {record.fingerprint}", ""]
    out += [f"- {line.strip()}" for line in lines(view)[1:]]
    out += ["", "## Throughput per window", ""]
    rows = [
        (format_duration(w["at_s"]), str(w["units"]), f"{w['throughput']:.0f}",
         "—" if w.get("se") is None else f"± {w['se']:.0f}")
        for w in record.series
    ]  # fmt: skip
    out += _table(("from", "units", "per hour", "standard error"), rows)
    if plot_name:
        out += ["", f"![throughput, temperature and power over the soak]({plot_name})"]
    out += ["", f"Raw turns and every tick's readings: `{record.data.get('runs_dir')}`", ""]
    return "\n".join(out)


def write_soak_report(view: SoakView, plotting: bool) -> list[Path]:
    """The soak's Markdown report and its plot, beside the soak file."""
    written: list[Path] = []
    if plotting and view.record is not None:
        written.append(write_soak_plot(view.record, view.plot_path))
    atomic_write_text(view.report_path, soak_markdown(view, written[0].name if written else None))
    return [view.report_path, *written]
