"""Durations as people write them: `8h`, `30m`, `90s`, `1h30m` or a number of seconds (how
long a soak runs, how long one must have held for the gate)."""

from __future__ import annotations

import re

from ..errors import BadInput

WEEK_S = 7 * 24 * 3600.0
_PART = re.compile(r"(\d+(?:\.\d+)?)([smhd])")
_UNIT_S = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def parse_duration(text: str, what: str = "--duration") -> float:
    """Seconds; BadInput for text that does not parse, zero, or more than a week."""
    raw = text.strip().lower().replace(" ", "")
    seconds: float | None = None
    if re.fullmatch(r"\d+(?:\.\d+)?", raw):
        seconds = float(raw)
    elif raw and re.fullmatch(r"(?:\d+(?:\.\d+)?[smhd])+", raw):
        seconds = sum(float(n) * _UNIT_S[u] for n, u in _PART.findall(raw))
    if seconds is None:
        raise BadInput(f"{what} {text!r} is not a duration (write it like 8h, 30m, 1h30m or 90s)")
    if seconds <= 0:
        raise BadInput(f"{what} must be longer than zero, not {text!r}")
    if seconds > WEEK_S:
        raise BadInput(f"{what} {text!r} is more than a week (at most 7d)")
    return seconds


def format_duration(seconds: float) -> str:
    """`2h`, `1h30m`, `45s`: the shortest way to write it back."""
    whole = round(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    parts = [f"{v}{u}" for v, u in ((hours, "h"), (minutes, "m"), (secs, "s")) if v]
    return "".join(parts) or f"{seconds:g}s"
