"""`slots allowed`: how many runs may start now, and why (design §5 "Allowed").

Declaration 1 answers 1 without probing anything. Otherwise today's fingerprint is computed;
missing or stale evidence answers 1, says what differs from the nearest evidence on this
device, and writes a calibration request. With evidence, every recorded step is re-judged
against today's bounds, from the evidence's figures (see `figures`: kept in the cache and made
again from the evidence whenever it changed, so a large evidence file is not parsed on every
call). Every failure on the way (production not answering, a corrupt evidence
file) answers 1 with that failure as the reason: a gate fails safe.
"""

from __future__ import annotations

import errno
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..clock import SYSTEM_CLOCK, Clock
from ..config import LocalModels, load_config
from ..errors import EvidenceError, VibeyError

if TYPE_CHECKING:
    from ..interfaces.slots_interface import DeviceFacts, RunnerInfo
    from ..state import StateLayout
    from .figures import SweepFigures
    from .fingerprint import Fingerprint

# evidence, fingerprint and judge are imported inside the functions that need them: a declared
# 1 answers without them, and every storm pass asks.


@dataclass(frozen=True)
class AllowedAnswer:
    """The answer and everything a script needs to act on it.

    allowed: runs that may start now (≥ 1). reason: why, in words. fingerprint: today's
    (None when it was not needed or could not be computed). evidence: the file the answer
    rests on. requested: a calibration request was written. declaration: the config's
    concurrent_runs. ideal: the N the evidence supports, when there is evidence.
    """

    allowed: int
    reason: str
    fingerprint: str | None
    evidence: Path | None
    requested: bool
    declaration: int | str
    ideal: int | None = None
    request: Path | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "allowed": self.allowed,
            "reason": self.reason,
            "fingerprint": self.fingerprint,
            "evidence": str(self.evidence) if self.evidence else None,
            "requested": self.requested,
            "request": str(self.request) if self.request else None,
            "declaration": self.declaration,
            "ideal": self.ideal,
        }

    def line(self) -> str:
        return f"{self.allowed} — {self.reason}"


@dataclass(frozen=True)
class AllowedDeps:
    """What `decide_allowed` reads from the world, injectable for tests."""

    layout: StateLayout
    clock: Clock
    device: Callable[[], DeviceFacts]
    identify: Callable[[LocalModels], RunnerInfo]


def default_deps() -> AllowedDeps:
    from ..platforms.probes import PlatformProbes
    from ..runners.identify import identify_production
    from ..state import StateLayout

    return AllowedDeps(
        layout=StateLayout.from_env(),
        clock=SYSTEM_CLOCK,
        device=lambda: PlatformProbes.detect().device.describe(),
        identify=identify_production,
    )


def decide_allowed(
    config: LocalModels | None = None,
    *,
    model: str | None = None,
    window: int | None = None,
    deps: AllowedDeps | None = None,
) -> AllowedAnswer:
    config = (config or load_config()).with_overrides(model=model, window=window)
    declaration = config.concurrent_runs
    if declaration == 1:
        return AllowedAnswer(1, "declared 1 (concurrent_runs = 1)", None, None, False, 1)
    from .fingerprint import compute_fingerprint

    deps = deps or default_deps()
    try:
        identity = deps.identify(config)
    except VibeyError as exc:
        return AllowedAnswer(1, f"production runner: {exc}", None, None, False, declaration)
    fingerprint = compute_fingerprint(deps.device(), identity, config.window)
    try:
        return _decide_from_state(config, deps, fingerprint)
    except OSError as exc:  # a gate answers in every state of its state folder
        reason = f"state folder {deps.layout.root} unusable ({_state_problem(exc)})"
        return AllowedAnswer(1, reason, fingerprint.id, None, False, declaration)


def _decide_from_state(
    config: LocalModels, deps: AllowedDeps, fingerprint: Fingerprint
) -> AllowedAnswer:
    from .evidence import age_in_days, evidence_path, future_date_problem

    declaration = config.concurrent_runs
    # Looked up without creating anything: a read-only or broken state folder still answers.
    path = evidence_path(deps.layout, fingerprint.id, create=False)
    try:
        present = path.exists()
    except OSError as exc:
        reason = f"state folder {deps.layout.root} unusable ({_state_problem(exc)})"
        return _request(deps, config, fingerprint, reason, declaration)
    if not present:
        gap = "unmeasured: no evidence for this fingerprint" + _nearest(deps.layout, fingerprint)
        return _request(deps, config, fingerprint, gap, declaration)
    try:
        created_at, figures = _figures_of(deps.layout, fingerprint.id, path)
    except EvidenceError as exc:
        return _request(deps, config, fingerprint, f"unusable evidence: {exc}", declaration, path)
    now = deps.clock.now()
    future = future_date_problem(created_at, now)
    if future is not None:
        return _request(deps, config, fingerprint, f"unusable {future}", declaration, path)
    age = age_in_days(created_at, now)
    if age > config.stale_after_days:
        reason = f"stale: evidence is {age:.0f} days old (limit {config.stale_after_days:g})"
        return _request(deps, config, fingerprint, reason, declaration, path)
    return _from_figures(config, fingerprint, figures, path)


def _figures_of(layout: StateLayout, fingerprint: str, path: Path) -> tuple[float, SweepFigures]:
    """When the evidence was recorded, and its figures: kept ones, or made from the evidence."""
    from .figures import evidence_identity, read_figures, save_figures

    kept = read_figures(layout, fingerprint, path)
    if kept is not None:
        return kept
    from .baseline import sweep_figures
    from .evidence import load_evidence

    try:
        identity = evidence_identity(path)
    except OSError as exc:
        raise EvidenceError(f"cannot read evidence file {path}: {exc.strerror}") from None
    evidence = load_evidence(path)
    figures = sweep_figures(evidence.steps)
    save_figures(layout, fingerprint, identity, evidence.created_at, figures)
    return evidence.created_at, figures


def _from_figures(
    config: LocalModels, fingerprint: Fingerprint, figures: SweepFigures, path: Path
) -> AllowedAnswer:
    from .judge import judge_figures

    declaration = config.concurrent_runs
    judgement = judge_figures(figures, config.bounds)
    ideal = judgement.ideal
    if declaration == "measured":
        return AllowedAnswer(
            ideal, f"measured: {judgement.reason}", fingerprint.id, path, False, declaration, ideal
        )
    assert isinstance(declaration, int)
    verdict = judgement.verdict_for(declaration)
    if verdict is not None and verdict.qualifies:
        reason = f"declared {declaration}, and the evidence supports it ({verdict.label})"
        return AllowedAnswer(declaration, reason, fingerprint.id, path, False, declaration, ideal)
    if verdict is None:
        why = f"{declaration} slots were not measured on this device"
    elif not verdict.inside_bounds:
        why = f"{declaration} slots broke a bound: {verdict.broken[0]}"
    else:
        gain = "unknown" if verdict.gain is None else f"{verdict.gain:+.0%}"
        why = f"{declaration} slots gained {gain} over one slot, less than min_gain"
    return AllowedAnswer(
        1,
        f"declared {declaration}, refused: {why}",
        fingerprint.id,
        path,
        False,
        declaration,
        ideal,
    )


def _nearest(layout: StateLayout, fingerprint: Fingerprint) -> str:
    from .evidence import iter_evidence_paths, read_fingerprint_fields
    from .fingerprint import describe_differences

    best: tuple[int, list[str]] | None = None
    try:
        paths = list(iter_evidence_paths(layout))
    except OSError:
        paths = []
    for path in paths:
        try:
            fields = read_fingerprint_fields(path)
        except EvidenceError:
            continue
        differences = describe_differences(fields, fingerprint.fields)
        if best is None or len(differences) < best[0]:
            best = (len(differences), differences)
    if best is None:
        return " (no evidence on this device yet)"
    return "; nearest evidence differs: " + ", ".join(best[1] or ["nothing named"])


def _request(
    deps: AllowedDeps,
    config: LocalModels,
    fingerprint: Fingerprint,
    reason: str,
    declaration: int | str,
    evidence: Path | None = None,
) -> AllowedAnswer:
    from .evidence import write_request

    settings = {"runner": config.runner, "model": config.model, "window": config.window}
    try:
        request = write_request(
            deps.layout, fingerprint.id, fingerprint.fields, reason, deps.clock.now(), settings
        )
    except OSError as exc:
        # The answer matters more than the request: a gate answers in every state.
        return AllowedAnswer(
            1,
            f"{reason} (calibration request not written: {_state_problem(exc)})",
            fingerprint.id,
            evidence,
            False,
            declaration,
        )
    return AllowedAnswer(
        1,
        reason + " — calibration requested",
        fingerprint.id,
        evidence,
        True,
        declaration,
        request=request,
    )


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


def _state_problem(exc: OSError) -> str:
    """Why the state folder could not be written, in a few words."""
    return _STATE_PROBLEMS.get(exc.errno or 0, exc.strerror or type(exc).__name__)


__all__ = ["AllowedAnswer", "AllowedDeps", "decide_allowed"]
