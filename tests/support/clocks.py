"""A clock for tests: time that moves only when something sleeps on it."""

from __future__ import annotations


class ManualClock:
    """Monotonic seconds `t` (from 0 unless given), wall time `epoch + t`; `sleep` moves both
    at once and returns at once."""

    def __init__(self, epoch: float = 0.0, t: float = 0.0) -> None:
        self.epoch, self.t = epoch, t

    def monotonic(self) -> float:
        return self.t

    def now(self) -> float:
        return self.epoch + self.t

    def sleep(self, seconds: float) -> None:
        self.t += seconds
