"""What a calibration settles before its first step: whose identity the evidence is keyed to
(production's, or the calibration binary's when production is not running), whether the
calibration binary is production's version, and waiting for production to unload its models.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

import msgspec

from ...clock import Clock
from ...errors import Refused, RunnerError
from ...interfaces.identity import BINARY_MARK, nameless_part
from ...interfaces.slots_interface import RunnerInfo
from ...runners.contract import ProductionWatch

if TYPE_CHECKING:
    from .calibration_setup import CalibrationRequest, Environment

IDLE_PROGRESS_EVERY_S = 30.0


class Messages(Protocol):
    def message(self, text: str) -> None: ...


def identity_of_production(env: Environment) -> tuple[RunnerInfo, str | None]:
    """Production's identity; when it does not answer, the calibration binary's (the same
    version and model digest give the same fingerprint), with why production is absent."""
    try:
        return env.production_identity(), None
    except RunnerError as exc:
        if env.calibration_identity is None:
            raise
        return env.calibration_identity(), str(exc)


class StartingIdentity(msgspec.Struct, frozen=True):
    """What the evidence is keyed to, and what was found out about production on the way."""

    identity: RunnerInfo
    production_absent: str | None = None
    version_mismatch: str | None = None


def check_identity(
    req: CalibrationRequest, env: Environment, progress: Messages
) -> StartingIdentity:
    """Before the first step: production's identity (or the calibration binary's when
    production is not running) and the calibration binary's version compared with it. A
    mismatch is refused (Refused), unless --out takes evidence that is not this device's."""
    try:
        production = env.production_identity()
    except RunnerError as exc:
        if env.calibration_identity is None:
            raise
        calibration = env.calibration_identity()
        if calibration.version is None:
            why = calibration.missing.get("version", "asked for its version, it names none")
            raise Refused(
                f"production is not answering ({exc}) and the calibration binary's version is "
                f"unknown ({why}): evidence keyed to an unknown version matches no production; "
                f"set runner_binary to {req.config.runner} itself (`vibey-gh doctor` checks it)"
            ) from None
        progress.message(
            f"production is not answering ({exc}); calibrating anyway: the evidence is keyed to "
            f"{_keyed_to(calibration.version)} and the model's digest, which production matches "
            "once it runs them"
        )
        return StartingIdentity(calibration, production_absent=str(exc))
    if env.production_drift is not None:
        for difference in env.production_drift():
            progress.message(f"production differs from the config: {difference}")
    if env.calibration_identity is None:
        return StartingIdentity(production)
    calibration = env.calibration_identity()
    if not (calibration.version and production.version):
        return StartingIdentity(production)
    if calibration.version == production.version:
        return StartingIdentity(production)
    line = (
        f"the calibration {req.config.runner} is version {calibration.version}, "
        f"production's is {production.version}"
    )
    if req.out_dir is None:
        raise Refused(
            f"{line}: evidence from another version is not this device's; install the same "
            "version (or give --out to write this sweep there only)"
        )
    mismatch = f"{line}: the evidence goes to {req.out_dir} only"
    progress.message(mismatch)
    return StartingIdentity(production, version_mismatch=mismatch)


def start_when_idle(
    production: ProductionWatch,
    clock: Clock,
    progress: Messages,
    wait_idle_s: float | None,
    what: str,
) -> None:
    """Return once production holds no model. Refused when it holds one and no wait was asked
    (`wait_idle_s` 0 or None), or still does after `wait_idle_s`; `what` names what starts
    only while it is idle ("calibration", "a soak")."""
    state = production.poll()
    if not state.busy:
        return
    held = ", ".join(state.models) or "a model"
    if not wait_idle_s:
        raise Refused(
            f"the production runner holds {held}; {what} starts only while it is idle "
            "(--wait-idle SECONDS waits for it)"
        )
    if not wait_for_idle(production, clock, progress, wait_idle_s):
        raise Refused(
            f"the production runner still holds {held} after {wait_idle_s:g}s of waiting; "
            f"{what} starts only while it is idle"
        )


def wait_for_idle(
    production: ProductionWatch,
    clock: Clock,
    progress: Messages,
    limit_s: float,
) -> bool:
    """Poll production once a second until it holds no model (True) or `limit_s` passed
    (False), saying every IDLE_PROGRESS_EVERY_S what it still holds."""
    started = clock.monotonic()
    next_note = started
    while True:
        state = production.poll()
        if not state.busy:
            return True
        waited = clock.monotonic() - started
        if waited >= limit_s:
            return False
        if clock.monotonic() >= next_note:
            held = ", ".join(state.models) or "a model"
            progress.message(
                f"waiting for the production runner to unload {held} "
                f"({waited:.0f}s of at most {limit_s:g}s)"
            )
            next_note = clock.monotonic() + IDLE_PROGRESS_EVERY_S
        clock.sleep(1.0)


def _keyed_to(version: str) -> str:
    """What a calibration binary's version keys the evidence to, in words."""
    nameless = nameless_part(version)
    if nameless is None:
        return f"the calibration binary's version {version}"
    digest = version.split(BINARY_MARK, 1)[1]
    return (
        f"the calibration binary itself (its version {nameless or 'is empty and'} names no "
        f"build, so the evidence is keyed to its sha256 {digest} as well: another build never "
        "matches it)"
    )
