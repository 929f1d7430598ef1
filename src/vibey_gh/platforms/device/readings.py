"""Readings every platform gives beyond the shared interface types."""

from __future__ import annotations

import msgspec

GIB = 1 << 30


class SwapSpace(msgspec.Struct, frozen=True):
    """Configured swap: total and used bytes, where they came from, or why they are None.

    A machine with no swap has total 0 (a reading, not a missing one).
    """

    total_bytes: int | None
    used_bytes: int | None
    source: str | None = None
    reason: str | None = None


def format_gib(value: int | None) -> str:
    """Bytes as "24.0 GiB" ("unknown" for None)."""
    return "unknown" if value is None else f"{value / GIB:.1f} GiB"
