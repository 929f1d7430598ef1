"""What a soak is asked: the calibration settings it replays with, how long, at which N."""

from __future__ import annotations

import msgspec

from ..measurement.calibration_setup import CalibrationRequest

MIN_WINDOW_S = 5.0
WINDOWS_WANTED = 12


class SoakRequest(msgspec.Struct, frozen=True):
    """`slots`: None for today's evidence's ideal N; `force`: an N above it anyway."""

    calibration: CalibrationRequest
    duration_s: float
    slots: int | None = None
    force: bool = False
    tick_s: float = 1.0

    @property
    def window_s(self) -> float:
        """Each window's length: a twelfth of the soak, at least a few seconds."""
        return max(MIN_WINDOW_S, self.duration_s / WINDOWS_WANTED)
