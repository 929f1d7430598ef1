"""`require_soak`: an N above one only where a soak at least that long held at N.

With `[local_models] require_soak = "2h"`, an answer of N > 1 stands only when a complete soak
of today's fingerprint at N, at least that long and no older than `stale_after_days`, held.
Otherwise the answer is the largest smaller N whose soak held (or 1), with why, and a soak at
N is requested as a calibration is (`requests/soak/<fp>.json`) unless a complete one at N of
that length was already recorded (it did not hold: soaking it again would answer the same).
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from ...config import LocalModels
from ...interfaces.durations import format_duration
from ...state import StateLayout
from ..evidence.fingerprint import Fingerprint
from ..evidence.soak_file import SoakRecord, soaks_for, write_soak_request
from ..evidence.store import SECONDS_PER_DAY

# a soak measured this much short of what is required still counts (its end is rounded)
SLACK_S = 1.0


class SoakLimit(msgspec.Struct, frozen=True):
    """What `require_soak` makes of an answer of `wanted`: the N that stands, what to add to
    the reason, the soak request written, and whether the N was lowered."""

    allowed: int
    said: str
    request: Path | None = None
    lowered: bool = False


def _usable(record: SoakRecord, config: LocalModels, now: float, need_s: float) -> bool:
    complete = record.data.get("complete") is True
    fresh = now - record.created_at <= config.stale_after_days * SECONDS_PER_DAY
    return complete and fresh and record.measured_s >= need_s - SLACK_S


def soak_limit(
    config: LocalModels, layout: StateLayout, now: float, fingerprint: Fingerprint, wanted: int
) -> SoakLimit | None:
    """None when nothing is required (`require_soak` off, or an answer of 1)."""
    need = config.require_soak
    if need is None or wanted <= 1:
        return None
    usable = {
        record.slots: record
        for _path, record in soaks_for(layout, fingerprint.id)
        if isinstance(record, SoakRecord) and _usable(record, config, now, need)
    }
    # each soak judged again from its windows under today's bounds, never taken at its word
    judged = {n: record.judged(config.bounds) for n, record in usable.items()}
    length = format_duration(need)
    at_wanted = usable.get(wanted)
    if at_wanted is not None and judged[wanted].holds:
        return SoakLimit(
            wanted, f"; a {format_duration(at_wanted.measured_s)} soak held at {wanted}"
        )
    fallback = max((n for n, v in judged.items() if v.holds and n < wanted), default=1)
    request: Path | None = None
    if at_wanted is not None:
        verdict = judged[wanted].rejudged or judged[wanted].verdict
        why = f"the {format_duration(at_wanted.measured_s)} soak at {wanted}: {verdict}"
    else:
        why = f"no soak of {length} or more held at {wanted} (require_soak = {length!r})"
        settings = {"runner": config.runner, "model": config.model, "window": config.window,
                    "slots": wanted, "duration_s": need}  # fmt: skip
        try:
            request = write_soak_request(
                layout, fingerprint.id, fingerprint.fields, why, now, settings
            )
        except OSError:
            request = None  # the answer matters more than the request
    said = f"; but {why}: {fallback}" + (" — soak requested" if request is not None else "")
    return SoakLimit(fallback, said, request, lowered=True)
