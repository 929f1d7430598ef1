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

from collections.abc import Callable
from dataclasses import dataclass, replace
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
    from .evidence import age_in_days, evidence_path
    from .fingerprint import compute_fingerprint

    deps = deps or default_deps()
    try:
        identity = deps.identify(config)
    except VibeyError as exc:
        return AllowedAnswer(1, f"production runner: {exc}", None, None, False, declaration)
    fingerprint = compute_fingerprint(deps.device(), identity, config.window)
    path = evidence_path(deps.layout, fingerprint.id)
    if not path.exists():
        gap = "unmeasured: no evidence for this fingerprint" + _nearest(deps.layout, fingerprint)
        return _request(deps, config, fingerprint, gap, declaration)
    try:
        created_at, figures = _figures_of(deps.layout, fingerprint.id, path)
    except EvidenceError as exc:
        return _request(deps, config, fingerprint, f"unusable evidence: {exc}", declaration, path)
    age = age_in_days(created_at, deps.clock.now())
    if age > config.stale_after_days:
        reason = f"stale: evidence is {age:.0f} days old (limit {config.stale_after_days:g})"
        return _request(deps, config, fingerprint, reason, declaration, path)
    answer = _from_figures(config, fingerprint, figures, path)
    if figures.without_intervals:
        # still answered from it, but it cannot say how sure it is: ask for a new measurement
        old = "measured without intervals (one pass over the corpus per step)"
        requested = _request(deps, config, fingerprint, old, declaration, path)
        return replace(
            answer, reason=f"{answer.reason}; {requested.reason}", requested=True,
            request=requested.request,
        )  # fmt: skip
    return answer


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
    for path in iter_evidence_paths(layout):
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
    request = write_request(
        deps.layout, fingerprint.id, fingerprint.fields, reason, deps.clock.now(), settings
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


__all__ = ["AllowedAnswer", "AllowedDeps", "decide_allowed"]
