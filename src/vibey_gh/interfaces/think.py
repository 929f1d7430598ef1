"""Think time on replay: how long a worker waits before each turn, as a lane ran its tools.

`--think-time` (config `think_time`) says which wait: "recorded" — each turn's own `think_s`
from the corpus (a turn without one waits nothing), cut to `--think-cap` (config `think_cap`);
"none" — turns back to back, the decision record's method; a number of seconds — the same
fixed wait before every turn, a what-if for tools of that length. Unset, it is "recorded" for
a corpus that holds think times and "none" for one that does not.

The policy is part of the method a sweep is keyed by (a checkpoint of another policy is never
resumed) and is written into the evidence.

Why the cap defaults to 60 s: recorded coding-agent sessions hold a median tool time of about
15 s, with a long tail (builds, a person answering) up to most of an hour. Cutting the tail
shortens only the idle time of a slot — a shorter idle time favours fewer slots, so the cut
errs on the side of one. A sweep whose policy waits is judged turn by turn by the closed-system
law (`slots.judging.statistics.think_law`), so its runs need not complete inside a step; a
single wait must fit in one (`max_step_seconds`, 300 s by default).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterable
from enum import StrEnum
from typing import TypedDict, TypeGuard

import msgspec

from ..errors import BadInput

DEFAULT_THINK_CAP_S = 60.0
MAX_THINK_S = 86_400.0
FLAGS = ("--think-time", "--think-cap")


class ThinkMode(StrEnum):
    """Which wait: each turn's recorded one, none, or a fixed number of seconds."""

    RECORDED = "recorded"
    NONE = "none"
    FIXED = "fixed"


RECORDED, NONE, FIXED = ThinkMode.RECORDED, ThinkMode.NONE, ThinkMode.FIXED


class ThinkJson(TypedDict, total=False):
    """The policy as a method and evidence record it (absent before think time)."""

    think_time: str
    think_cap_s: float


class ThinkPolicy(msgspec.Struct, frozen=True):
    """mode: RECORDED, NONE or FIXED; fixed_s: the wait of FIXED; cap_s: the longest recorded
    wait kept."""

    mode: ThinkMode = NONE
    fixed_s: float = 0.0
    cap_s: float = DEFAULT_THINK_CAP_S

    def seconds_before(self, think_s: float | None) -> float:
        """How long a worker waits before a turn whose recorded think time is `think_s`."""
        if self.mode == FIXED:
            return self.fixed_s
        if self.mode == RECORDED and think_s is not None:
            return min(think_s, self.cap_s)
        return 0.0

    @property
    def waits(self) -> bool:
        return self.mode == RECORDED or (self.mode == FIXED and self.fixed_s > 0)

    @property
    def label(self) -> str:
        """As the option takes it: "recorded", "none" or the seconds."""
        return f"{self.fixed_s:g}" if self.mode == FIXED else self.mode

    def describe(self) -> str:
        if self.mode == RECORDED:
            return f"each turn's recorded think time, cut to {self.cap_s:g} s"
        if self.mode == FIXED:
            return f"{self.fixed_s:g} s before every turn"
        return "none: turns back to back"

    # By hand, with `from_json`: evidence and methods spell the mode and its seconds as the
    # option does (one field, "recorded", "none" or "12"), which no declared field can hold.
    def to_json(self) -> ThinkJson:
        return {"think_time": self.label, "think_cap_s": self.cap_s}

    @classmethod
    def from_json(cls, data: object) -> ThinkPolicy:
        """From evidence or a method; NONE (the method before think time) when absent."""
        if not isinstance(data, dict):
            return cls()
        cap = data.get("think_cap_s", DEFAULT_THINK_CAP_S)
        mode, fixed = parse_think_time(data.get("think_time", NONE), "think_time")
        return cls(mode, fixed, float(cap) if _is_number(cap) else DEFAULT_THINK_CAP_S)


def parse_think_time(value: object, name: str = "--think-time") -> tuple[ThinkMode, float]:
    """(mode, fixed seconds) from "recorded", "none" or a number of seconds >= 0."""
    if value in (RECORDED, NONE):
        return ThinkMode(str(value)), 0.0
    number: float | None = None
    if _is_number(value):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            number = None
    if number is None or not 0.0 <= number <= MAX_THINK_S:
        raise BadInput(
            f"{name} must be recorded, none or a number of seconds from 0 to "
            f"{MAX_THINK_S:g}, not {value!r}"
        )
    return FIXED, number


def check_think_cap(value: object, name: str = "--think-cap") -> float:
    """A cap is a number of seconds > 0."""
    if not _is_number(value) or not 0.0 < float(value) <= MAX_THINK_S:
        raise BadInput(
            f"{name} must be a number of seconds above 0 and at most {MAX_THINK_S:g} (a day), "
            f"not {value!r}"
        )
    return float(value)


class ThinkAsked(msgspec.Struct, frozen=True):
    """The wait asked for before the corpus is known, parsed once where it is given — the
    command line's flags or the config's `think_time` and `think_cap`.

    mode None: by the corpus (recorded where it holds think times, else none); cap_s None:
    not given here. A value from the command line lays itself `over` the config's."""

    mode: ThinkMode | None = None
    fixed_s: float = 0.0
    cap_s: float | None = None

    @classmethod
    def parse(
        cls, think_time: object = None, think_cap: object = None, names: tuple[str, str] = FLAGS
    ) -> ThinkAsked:
        """From a think time and a cap as given (None: not given): the flags' text or the
        config's values, checked under `names`."""
        mode, fixed = (None, 0.0) if think_time is None else parse_think_time(think_time, names[0])
        if isinstance(think_cap, str):  # as the command line gives it
            with contextlib.suppress(ValueError):
                think_cap = float(think_cap)
        cap = None if think_cap is None else check_think_cap(think_cap, names[1])
        return cls(mode, fixed, cap)

    def over(self, config: ThinkAsked) -> ThinkAsked:
        """This value where it says something, the config's where it does not."""
        mode, fixed = (
            (self.mode, self.fixed_s) if self.mode is not None else (config.mode, config.fixed_s)
        )
        return ThinkAsked(mode, fixed, config.cap_s if self.cap_s is None else self.cap_s)

    def with_cap(self, cap_s: float) -> ThinkAsked:
        return msgspec.structs.replace(self, cap_s=cap_s)

    def for_corpus(self, recorded: Iterable[float | None]) -> ThinkPolicy:
        """The policy for a corpus whose turns have the think times `recorded`: unset means
        recorded where the corpus has any, else none; "recorded" on a corpus without any is
        bad input."""
        timed = any(think is not None for think in recorded)
        cap = DEFAULT_THINK_CAP_S if self.cap_s is None else self.cap_s
        if self.mode is None:
            return ThinkPolicy(RECORDED if timed else NONE, 0.0, cap)
        if self.mode == RECORDED and not timed:
            raise BadInput(
                "--think-time recorded: this corpus holds no think times (its source had no "
                "timing); use --think-time none or a number of seconds"
            )
        return ThinkPolicy(self.mode, self.fixed_s, cap)


def _is_number(value: object) -> TypeGuard[float | int]:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
