"""`slots allowed`: how many runs may start now, and why (design §5 "Allowed").

On an OS the tool does not run on (anything but macOS and Linux) the answer is 1, naming the
supported platforms. Declaration 1 answers 1 without probing anything. Otherwise today's
fingerprint is computed; missing or stale evidence answers 1, says what differs from the
nearest evidence on this device, and writes a calibration request. With evidence, every
recorded step is re-judged against today's bounds, from the evidence's figures (see `figures`:
kept in the cache and made again from the evidence whenever it changed, so a large evidence
file is not parsed on every call). Every failure on the way (production not answering, a
corrupt evidence file, a config that does not parse) answers 1 with that failure as the
reason: a gate fails safe. Every answer carries a `reason_code` from `REASON_CODES`, for
scripts that branch on it.
"""

from __future__ import annotations

import errno
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec
from msgspec.structs import replace

from ...clock import Clock
from ...config import LocalModels, load_config
from ...errors import BadInput, ConfigError, EvidenceError, VibeyError

if TYPE_CHECKING:
    from ...interfaces.slots_interface import DeviceFacts, RunnerInfo
    from ...state import StateLayout
    from ..evidence.fingerprint import Fingerprint
    from ..judging.figures import SweepFigures

# evidence, fingerprint and judge are imported inside the functions that need them: a declared
# 1 answers without them, and every storm pass asks.

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

    # By hand: `slots allowed --json`, a fixed form scripts read, with fields computed here.
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


def decide_allowed(
    config: LocalModels | None = None,
    *,
    model: str | None = None,
    window: int | None = None,
    deps: AllowedDeps | Callable[[], AllowedDeps],
    platform: str | None = None,
) -> AllowedAnswer:
    """The answer for `config` on `platform` (default: this machine's). `deps` may be a
    function that builds them: it is called only once the answer needs the world."""
    from ...platforms.support import unsupported_platform_reason

    if config is None:
        try:
            config = load_config()
        except ConfigError as exc:
            reason = f"config error: {exc} (1 until the config is fixed)"
            return AllowedAnswer(1, reason, None, None, False, None, reason_code="config_error")
    config = config.with_overrides(model=model, window=window)
    declaration = config.concurrent_runs
    unsupported = unsupported_platform_reason(platform)
    if unsupported is not None:
        # No probe, lock or runner of ours works here: one is the only safe answer, and a
        # fingerprint of unknowns would only hide why.
        return AllowedAnswer(
            1, unsupported, None, None, False, declaration, reason_code="unsupported_platform"
        )
    if declaration == 1:
        return AllowedAnswer(1, "declared 1 (concurrent_runs = 1)", None, None, False, 1)
    deps = deps if isinstance(deps, AllowedDeps) else deps()
    try:
        identity = deps.identify(config)
    except VibeyError as exc:
        return AllowedAnswer(
            1,
            f"production runner: {exc}",
            None,
            None,
            False,
            declaration,
            reason_code="production_unreachable",
        )
    return _with_production_slots(
        _answer_for(config, deps, identity, declaration), identity.serving_slots
    )


def _with_production_slots(answer: AllowedAnswer, serving: int | None) -> AllowedAnswer:
    """The answer with what production serves now; the reason says when that is fewer."""
    from msgspec.structs import replace

    if serving is None:
        if answer.allowed <= 1:
            return answer
        # a storm would start that many lanes on a production that may serve one at a time
        return replace(
            answer,
            reason=f"{answer.reason}; production's parallelism is unknown: make sure it "
            f"serves {answer.allowed} slots (`vibey-gh slots apply` shows how)",
        )
    if answer.allowed <= serving:
        return replace(answer, production_slots=serving)
    reason = (
        f"{answer.reason}; but production serves only {serving} slot(s) now: "
        f"`vibey-gh slots apply` gives it {answer.allowed}"
    )
    return replace(answer, production_slots=serving, reason=reason)


def _answer_for(
    config: LocalModels, deps: AllowedDeps, identity: RunnerInfo, declaration: int | str
) -> AllowedAnswer:
    from ..evidence.fingerprint import compute_fingerprint

    fingerprint = compute_fingerprint(deps.device(), identity, config.window)
    try:
        return _decide_from_state(config, deps, fingerprint)
    except OSError as exc:  # a gate answers in every state of its state folder
        reason = f"state folder {deps.layout.root} unusable ({_state_problem(exc)})"
        return AllowedAnswer(
            1, reason, fingerprint.id, None, False, declaration, reason_code="state_unusable"
        )


def _decide_from_state(
    config: LocalModels, deps: AllowedDeps, fingerprint: Fingerprint
) -> AllowedAnswer:
    from ..evidence.store import age_in_days, evidence_path, future_date_problem

    declaration = config.concurrent_runs
    # Looked up without creating anything: a read-only or broken state folder still answers.
    path = evidence_path(deps.layout, fingerprint.id, create=False)
    try:
        present = path.exists()
    except OSError as exc:
        reason = f"state folder {deps.layout.root} unusable ({_state_problem(exc)})"
        return _request(deps, config, fingerprint, reason, declaration, "state_unusable")
    if not present:
        gap = "unmeasured: no evidence for this fingerprint" + _nearest(deps.layout, fingerprint)
        return _request(deps, config, fingerprint, gap, declaration, "unmeasured")
    try:
        created_at, figures = _figures_of(deps.layout, fingerprint.id, path)
    except EvidenceError as exc:
        reason = f"unusable evidence: {exc}"
        return _request(deps, config, fingerprint, reason, declaration, "unusable_evidence", path)
    now = deps.clock.now()
    future = future_date_problem(created_at, now)
    if future is not None:
        reason = f"unusable {future}"
        return _request(deps, config, fingerprint, reason, declaration, "unusable_evidence", path)
    age = age_in_days(created_at, now)
    if age > config.stale_after_days:
        reason = f"stale: evidence is {age:.0f} days old (limit {config.stale_after_days:g})"
        stale = _request(deps, config, fingerprint, reason, declaration, "stale", path)
        return replace(stale, evidence_age_s=max(0.0, now - created_at))
    answer = _from_figures(config, fingerprint, figures, path)
    answer = replace(answer, evidence_age_s=max(0.0, now - created_at))
    if config.require_soak is not None:
        answer = _with_soak_required(answer, config, deps, fingerprint)
    if figures.without_intervals:
        # still answered from it, but it cannot say how sure it is: ask for a new measurement
        old = "measured without intervals (one pass over the corpus per step)"
        requested = _request(deps, config, fingerprint, old, declaration, answer.reason_code, path)
        return replace(
            answer, reason=f"{answer.reason}; {requested.reason}", requested=True,
            request=requested.request,
        )  # fmt: skip
    return answer


def _with_soak_required(
    answer: AllowedAnswer, config: LocalModels, deps: AllowedDeps, fingerprint: Fingerprint
) -> AllowedAnswer:
    from .soak_gate import soak_limit

    limit = soak_limit(config, deps.layout, deps.clock.now(), fingerprint, answer.allowed)
    if limit is None:
        return answer
    return replace(
        answer,
        allowed=limit.allowed,
        reason=answer.reason + limit.said,
        reason_code="soak_required" if limit.lowered else answer.reason_code,
        requested=answer.requested or limit.request is not None,
        request=answer.request or limit.request,
    )


def _figures_of(layout: StateLayout, fingerprint: str, path: Path) -> tuple[float, SweepFigures]:
    """When the evidence was recorded, and its figures: kept ones, or made from the evidence.

    The evidence file is read once; kept figures count only for exactly these bytes, and
    evidence that was not recorded as this device's (written to --out only) counts nowhere."""
    from ..evidence.figures_cache import read_evidence_bytes, read_figures, save_figures

    held = read_evidence_bytes(path)
    kept = read_figures(layout, fingerprint, held)
    if kept is not None:
        return kept
    from ..evidence.store import load_evidence_bytes, not_recorded_problem, recorded_digest
    from ..judging.baseline import sweep_figures

    evidence = load_evidence_bytes(held.raw, path)
    problem = not_recorded_problem(evidence)
    if problem is not None:
        raise EvidenceError(problem)
    figures = sweep_figures(evidence.steps)
    save_figures(layout, fingerprint, {"sha256": held.sha256}, recorded_digest(evidence), figures)
    return evidence.created_at, figures


def _from_figures(
    config: LocalModels, fingerprint: Fingerprint, figures: SweepFigures, path: Path
) -> AllowedAnswer:
    from ..judging.judge import judge_figures

    declaration = config.concurrent_runs
    judgement = judge_figures(figures, config.bounds)
    ideal = judgement.ideal
    if declaration == "measured":
        reason = f"measured: {judgement.reason}"
        return AllowedAnswer(
            ideal, reason, fingerprint.id, path, False, declaration, ideal, reason_code="measured"
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
        reason_code="refused",
    )


def _nearest(layout: StateLayout, fingerprint: Fingerprint) -> str:
    from ..evidence.fingerprint import describe_differences
    from ..evidence.store import iter_evidence_paths, read_fingerprint_fields

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
    reason_code: str,
    evidence: Path | None = None,
) -> AllowedAnswer:
    from ..evidence.requests import write_request

    if not deps.files_requests:
        return AllowedAnswer(
            1,
            reason + " — `slots allowed` would request a calibration",
            fingerprint.id,
            evidence,
            False,
            declaration,
            reason_code=reason_code,
        )
    settings = {"runner": config.runner, "model": config.model, "window": config.window}
    try:
        request = write_request(
            deps.layout, fingerprint.id, fingerprint.fields, reason, deps.clock.now(), settings
        )
    except (OSError, BadInput) as exc:
        # The answer matters more than the request: a gate answers in every state (BadInput:
        # something that is not a regular file holds the request's name).
        problem = _state_problem(exc) if isinstance(exc, OSError) else str(exc)
        return AllowedAnswer(
            1,
            f"{reason} (calibration request not written: {problem})",
            fingerprint.id,
            evidence,
            False,
            declaration,
            reason_code=reason_code,
        )
    return AllowedAnswer(
        1,
        reason + " — calibration requested",
        fingerprint.id,
        evidence,
        True,
        declaration,
        request=request,
        reason_code=reason_code,
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


__all__ = ["ALLOWED_SCHEMA", "REASON_CODES", "AllowedAnswer", "AllowedDeps", "decide_allowed"]
