"""The gate's answer from evidence: today's fingerprint, its evidence (or the nearest one and a
calibration request), the evidence's figures (kept in the cache and made again from the
evidence whenever it changed, so a large evidence file is not parsed on every call), each
recorded step re-judged against today's bounds, and a soak when `require_soak` asks for one.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from msgspec.structs import replace

from ...config import LocalModels
from ...errors import BadInput, EvidenceError
from ..evidence.fingerprint import Fingerprint, compute_fingerprint, describe_differences
from ..evidence.requests import write_request
from ..evidence.store import (
    age_in_days,
    evidence_path,
    future_date_problem,
    iter_evidence_paths,
    read_fingerprint_fields,
)
from .answer import AllowedAnswer, AllowedDeps, state_problem

if TYPE_CHECKING:
    from ...interfaces.identity import RunnerInfo
    from ...state import StateLayout


def answer_from_evidence(
    config: LocalModels, deps: AllowedDeps, identity: RunnerInfo, declaration: int | str
) -> AllowedAnswer:
    fingerprint = compute_fingerprint(deps.device(), identity, config.window)
    try:
        return _decide_from_state(config, deps, fingerprint)
    except OSError as exc:  # a gate answers in every state of its state folder
        reason = f"state folder {deps.layout.root} unusable ({state_problem(exc)})"
        return AllowedAnswer(
            1, reason, fingerprint.id, None, False, declaration, reason_code="state_unusable"
        )


def _decide_from_state(
    config: LocalModels, deps: AllowedDeps, fingerprint: Fingerprint
) -> AllowedAnswer:
    declaration = config.concurrent_runs
    # Looked up without creating anything: a read-only or broken state folder still answers.
    path = evidence_path(deps.layout, fingerprint.id, create=False)
    try:
        present = path.exists()
    except OSError as exc:
        reason = f"state folder {deps.layout.root} unusable ({state_problem(exc)})"
        return _request(deps, config, fingerprint, reason, declaration, "state_unusable")
    if not present:
        gap = "unmeasured: no evidence for this fingerprint" + _nearest(deps.layout, fingerprint)
        return _request(deps, config, fingerprint, gap, declaration, "unmeasured")
    # lazy: the figures and the judge are loaded only where evidence exists; an unmeasured
    # answer files its request without them
    from .judged import answer_from_figures, figures_of

    try:
        created_at, figures = figures_of(deps.layout, fingerprint.id, path)
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
    answer = answer_from_figures(config, fingerprint, figures, path)
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
    # lazy: soaks are read only where the config sets require_soak
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


def _nearest(layout: StateLayout, fingerprint: Fingerprint) -> str:
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
        problem = state_problem(exc) if isinstance(exc, OSError) else str(exc)
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
