"""What `slots allowed` answers and what it reads from the world: the answer's record, its
reason codes and the parts the composition root hands the gate (`allowed` decides,
`measured` answers from evidence).
"""

from __future__ import annotations

import errno
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from ...clock import Clock
from ...config import LocalModels

if TYPE_CHECKING:
    from ...interfaces.slots_interface import DeviceFacts, RunnerInfo
    from ...state import StateLayout

# The JSON answer's layout; raised when a key changes meaning or goes away, not when one is added.
ALLOWED_SCHEMA = 1
# Why the answer is what it is, one word per case a script may want to act on.
REASON_CODES = (
    "declared",  # the declaration answered, without evidence (1) or with its support (N)
    "measured",  # concurrent_runs = "measured": the evidence's ideal
    "unmeasured",  # no evidence for today's fingerprint (a calibration is requested)
    "stale",  # evidence older than stale_after_days (a calibration is requested)
    "refused",  # a declared N the evidence does not support
    "unusable_evidence",  # an evidence file that cannot be read (a calibration is requested)
    "state_unusable",  # the state folder cannot be read or written (read-only, full, a file)
    "production_unreachable",  # the production runner did not say what it runs
    "config_error",  # the config does not parse: 1 until it is fixed
    "soak_required",  # require_soak: no soak long enough held at the N the evidence supports
    "unsupported_platform",  # an OS other than macOS and Linux: 1, always
)


class AllowedAnswer(msgspec.Struct, frozen=True):
    """The answer and everything a script needs to act on it.

    allowed: runs that may start now (≥ 1). reason: why, in words. fingerprint: today's
    (None when it was not needed or could not be computed). evidence: the file the answer
    rests on. requested: a calibration request was written. declaration: the config's
    concurrent_runs (None when the config could not be read). ideal: the N the evidence
    supports, when there is evidence. reason_code: one of `REASON_CODES`.
    evidence_age_s: how old the evidence was at the answer, when it could be read.
    production_slots: the parallel slots production serves now, where it says (llama-server's
    /props, Ollama's OLLAMA_NUM_PARALLEL); None when unknown or not asked.
    """

    allowed: int
    reason: str
    fingerprint: str | None
    evidence: Path | None
    requested: bool
    declaration: int | str | None
    ideal: int | None = None
    request: Path | None = None
    reason_code: str = "declared"
    evidence_age_s: float | None = None
    production_slots: int | None = None

    # By hand: `slots allowed --json`, a fixed form scripts read (`ALLOWED_SCHEMA`, its own
    # names), and what apply's `Answer` protocol and its stand-ins give as a plain object.
    def to_json(self) -> dict[str, object]:
        return {
            "schema_version": ALLOWED_SCHEMA,
            "allowed": self.allowed,
            "reason": self.reason,
            "reason_code": self.reason_code,
            "fingerprint": self.fingerprint,
            "evidence": str(self.evidence) if self.evidence else None,
            "requested": self.requested,
            "request": str(self.request) if self.request else None,
            "declaration": self.declaration,
            "ideal": self.ideal,
            "evidence_age_seconds": self.evidence_age_s,
            "production_slots": self.production_slots,
        }

    def line(self) -> str:
        return f"{self.allowed} — {self.reason}"


class AllowedDeps(msgspec.Struct, frozen=True):
    """What `decide_allowed` reads from the world; the real ones are built by the composition
    root (`vibey_gh.composition`, `Collaborators.allowed_deps`)."""

    layout: StateLayout
    clock: Clock
    device: Callable[[], DeviceFacts]
    identify: Callable[[LocalModels], RunnerInfo]
    # False for a what-if (what `slots allowed` would answer): asking it must file nothing
    files_requests: bool = True


_STATE_PROBLEMS = {
    errno.EROFS: "read-only state",
    errno.ENOSPC: "disk full",
    errno.EDQUOT: "disk quota exceeded",
    errno.ENOTDIR: "the state path is not a folder",
    errno.EEXIST: "the state path is not a folder",
    errno.ENAMETOOLONG: "state path too long",
    errno.EACCES: "state not writable",
    errno.EPERM: "state not writable",
}


def state_problem(exc: OSError) -> str:
    """Why the state folder could not be written, in a few words."""
    return _STATE_PROBLEMS.get(exc.errno or 0, exc.strerror or type(exc).__name__)
