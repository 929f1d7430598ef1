"""Which N a soak holds: today's evidence's ideal, or `--slots N` within what it supports."""

from __future__ import annotations

from ...errors import BadInput, EvidenceError
from ...interfaces.bounds import Bounds
from ...state import StateLayout
from ..evidence.store import evidence_path, load_evidence
from ..judging.judge import judge_sweep
from ..measurement.calibration_setup import Environment
from ..measurement.calibration_start import identity_of_production


def requested_fingerprint(env: Environment, window: int) -> str:
    """Today's fingerprint id at `window` (production's identity, or the binary's)."""
    identity, _absent = identity_of_production(env)
    return env.fingerprint_of(env.device, identity, window).id


def evidence_ideal(layout: StateLayout, fingerprint: str, bounds: Bounds) -> tuple[int | None, str]:
    """The ideal N of today's evidence, or None with why there is none."""
    path = evidence_path(layout, fingerprint, create=False)
    if not path.exists():
        return None, f"no evidence for fingerprint {fingerprint} (calibrate first)"
    try:
        evidence = load_evidence(path)
    except EvidenceError as exc:
        return None, f"unusable evidence: {exc}"
    return judge_sweep(evidence.steps, bounds).ideal, f"the ideal N of {path}"


def choose_slots(asked: int | None, ideal: int | None, why: str, force: bool) -> tuple[int, str]:
    """The N to hold and why; BadInput for an N the evidence does not support (unless forced)."""
    if asked is not None and asked < 1:
        raise BadInput(f"--slots must be 1 or more, not {asked}")
    if asked is None:
        if ideal is None:
            raise BadInput(f"no N to soak: {why}; or give --slots N (with --force above 1)")
        return ideal, why
    if asked == 1 or force:
        return asked, "--slots" + (" (forced)" if force and asked > 1 else "")
    if ideal is None:
        raise BadInput(f"--slots {asked} is not supported by evidence ({why}); add --force")
    if asked > ideal:
        raise BadInput(
            f"--slots {asked} is above the evidence's ideal N {ideal}; "
            "add --force to soak it anyway"
        )
    return asked, "--slots"
