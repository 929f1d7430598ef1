"""Bounds name the readings they need. Adding one on a new reading, as the recipe in
docs/architecture.md says: the sensor reads it (`gpu<i>.temperature_c`, nvidia-smi), a bound
names it and says what broke, and the soak's judge holds every tick against it."""

from __future__ import annotations

from dataclasses import dataclass

from vibey_gh.interfaces.readings import Reading, ReadingSample, missing
from vibey_gh.slots.judging.readings.reading_bounds import (
    WiredCeiling,
    breaks_over_time,
    matching,
    read_any,
)


@dataclass(frozen=True)
class GpuTemperatureCeiling:
    """The bound added here: no GPU above `limit_c` degrees."""

    limit_c: float
    name: str = "gpu_temperature_c"
    needs: tuple[str, ...] = ("gpu*.temperature_c",)

    def broken(self, sample: ReadingSample) -> str | None:
        hot = [(n, v) for n, v in read_any(sample, self.needs) if v > self.limit_c]
        return None if not hot else f"{hot[0][0]} at {hot[0][1]:g} °C, above {self.limit_c:g}"


def _tick(t: float, **readings: Reading) -> tuple[float, ReadingSample]:
    return t, ReadingSample(t, {k.replace("__", "."): v for k, v in readings.items()})


def test_a_new_bound_on_a_new_reading_breaks_at_its_first_hot_tick() -> None:
    ticks = [
        _tick(0, gpu0__temperature_c=Reading(70.0, "C"), gpu1__temperature_c=Reading(75.0, "C")),
        _tick(60, gpu0__temperature_c=Reading(81.0, "C"), gpu1__temperature_c=Reading(88.0, "C")),
        _tick(120, gpu0__temperature_c=Reading(90.0, "C")),
    ]
    breaks, unjudged = breaks_over_time(ticks, [GpuTemperatureCeiling(85.0)])
    assert [(b.at_s, b.bound) for b in breaks] == [(60, "gpu_temperature_c")]
    assert breaks[0].text == "gpu1.temperature_c at 88 °C, above 85"
    assert unjudged == ()


def test_a_bound_whose_readings_are_all_missing_is_unjudged_with_their_reasons() -> None:
    ticks = [_tick(0, gpu0__temperature_c=missing("nvidia-smi printed '[N/A]'", "C"))]
    breaks, unjudged = breaks_over_time(ticks, [GpuTemperatureCeiling(85.0)])
    assert breaks == ()
    assert unjudged == (
        "gpu_temperature_c not judged (gpu0.temperature_c: nvidia-smi printed '[N/A]')",
    )
    _, none_at_all = breaks_over_time([_tick(0)], [GpuTemperatureCeiling(85.0)])
    assert "no source on this machine reads it" in none_at_all[0]


def test_needs_match_numbered_readings_only() -> None:
    names = ("gpu0.temperature_c", "gpux.temperature_c", "gpu12.temperature_c")
    sample = ReadingSample(0, {name: Reading(1.0) for name in names})
    assert matching(sample, "gpu*.temperature_c") == ["gpu0.temperature_c", "gpu12.temperature_c"]


def test_the_wired_ceiling_prefers_the_charged_reading() -> None:
    bound = WiredCeiling(0.8)
    raw = {"host.wired_bytes": Reading(9e9), "host.total_bytes": Reading(10e9)}
    charged = ReadingSample(0, {**raw, "charged.wired_bytes": Reading(5e9)})
    assert bound.broken(charged) is None
    assert bound.broken(ReadingSample(0, raw)) == "wired 9.00 GB over the ceiling 8.00 GB"
