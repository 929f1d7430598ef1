"""The soak's plot: throughput, temperature and power over the soak, one point per window.

A panel whose readings this machine could not take says so, with the reason, instead of an
empty axis.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ....files import atomic_write_bytes
from ...evidence.soak_file import SoakRecord
from .plot_parts import BAND_COLOUR, new_figure
from .plots import figure_png, keep_matplotlib_under_state

if TYPE_CHECKING:
    from matplotlib.axes import Axes

PANELS = ("throughput", "temperature", "power")


def _series(
    windows: Sequence[Mapping[str, Any]], suffix: str, prefix: str = ""
) -> dict[str, list[float]]:
    """Each reading ending in `suffix` (and starting with `prefix`): its window means."""
    names = sorted({n for w in windows for n in w.get("readings", {})
                    if n.endswith(suffix) and n.startswith(prefix)})  # fmt: skip
    return {
        name: [w.get("readings", {}).get(name, {}).get("mean", float("nan")) for w in windows]
        for name in names
    }


def _missing(ax: Axes, what: str, why: str) -> None:
    ax.text(0.5, 0.5, f"{what} not read here: {why}", ha="center", va="center",
            transform=ax.transAxes, fontsize=9, color=BAND_COLOUR, wrap=True)  # fmt: skip


def write_soak_plot(record: SoakRecord, path: Path) -> Path:
    keep_matplotlib_under_state()
    windows = record.series
    # minutes for a soak of less than an hour, hours for one of a night
    longest = max((w["at_s"] + w["length_s"] for w in windows), default=0.0)
    scale, unit = (3600.0, "hours") if longest >= 3600.0 else (60.0, "minutes")
    hours = [(w["at_s"] + w["length_s"] / 2) / scale for w in windows]
    title = f"Soak at N={record.slots} — fingerprint {record.fingerprint}"
    figure, (rate, heat, power) = new_figure(3, 8.0, title)
    first = windows[0]["throughput"] if windows else 0.0
    # the 90 % band of each window's batch means
    band = [1.645 * (w.get("se") or 0.0) for w in windows]
    rate.errorbar(hours, [w["throughput"] for w in windows], yerr=band, fmt="o-", capsize=3)
    if first:
        floor = first * (1.0 - float(record.data.get("bounds", {}).get("min_gain", 0.1)))
        rate.axhline(floor, color="tab:red", linestyle="--", label="first window − min_gain")
        rate.legend(loc="lower left", fontsize=8)
    rate.set_ylabel("units per hour")
    missing = (record.data.get("readings") or {}).get("missing") or {}
    temperatures = _series(windows, "_c")
    for name, values in temperatures.items():
        heat.plot(hours, values, marker=".", label=name)
    if temperatures:
        heat.legend(loc="upper left", fontsize=8)
    else:
        why = missing.get("thermal.zones") or missing.get("gpu.sensors") or "no sensor"
        _missing(heat, "temperature", why)
    heat.set_ylabel("°C")
    watts = _series(windows, ".power_w")
    for name, values in watts.items():
        power.plot(hours, values, marker=".", label=name)
    for name, values in _series(windows, ".power_limit_w").items():
        power.plot(hours, values, linestyle="--", label=name)
    if watts:
        power.legend(loc="upper left", fontsize=8)
    else:
        _missing(power, "power", missing.get("gpu.sensors") or "no GPU power reading")
    power.set_ylabel("W")
    power.set_xlabel(f"{unit} into the soak")
    atomic_write_bytes(path, figure_png(figure))
    return path
