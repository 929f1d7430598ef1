"""Whether `slots calibrate` can run now, checked piece by piece the way it would fail.

`vibey-gh doctor` shows these: the calibration runner (its binary exists, runs, names its
version, the same as production's), the model (the GGUF file exists; Ollama has pulled it),
the calibration port (free, or which process holds it), the state folder (writable),
production (reachable, idle or busy, its parallelism) and the checkpoints on disk (which
today's fingerprint could resume). Each check says what to do when it is not "ok", so a
calibration that doctor passes fails on none of them, and one that doctor fails is fixed in
one pass instead of one missing piece at a time.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import msgspec

from ...config import LocalModels
from ...errors import BadInput, RunnerError, VibeyError
from ...files import atomic_write_text
from ...interfaces.schema import as_json
from ...interfaces.slots_interface import ProductionState, RunnerInfo
from ...runners.calibration_needs import FAIL, OK, WARN, Check, binary_check, model_check
from ...runners.process import ensure_port_free
from ...runners.registry import calibration_binary_version, runner_kind
from ...state import StateLayout
from ..evidence.checkpoints import list_checkpoints

PORT_ADVICE = "stop it, or calibrate on another port: --port N or [local_models] calibration_port"
WRITE_PROBE = ".doctor-write-check"
CHECK_WIDTH = 18


class ReadinessParts(msgspec.Struct, frozen=True):
    """What the checks read from the world: production's identity as doctor found it (None:
    `production_error` says why), the calibration binary's identity (None: the same runner as
    production's), the port check and production's idle state."""

    production: RunnerInfo | None
    production_error: str | None
    calibration_version: Callable[[LocalModels], tuple[str, str | None]] | None
    port_free: Callable[[int, str], None]
    poll_production: Callable[[LocalModels], ProductionState | None]


def real_parts(
    layout: StateLayout, production: RunnerInfo | None, production_error: str | None
) -> Callable[[LocalModels], ReadinessParts]:
    def parts(config: LocalModels) -> ReadinessParts:
        separate = not runner_kind(config.runner).calibrates_this_package
        return ReadinessParts(
            production=production,
            production_error=production_error,
            calibration_version=calibration_binary_version if separate else None,
            port_free=lambda port, advice: ensure_port_free(port, what_to_do=advice),
            poll_production=_poll,
        )

    return parts


def calibration_checks(
    config: LocalModels, layout: StateLayout, parts: ReadinessParts, today: str | None
) -> list[Check]:
    """Every check, in the order calibrate meets them; `today` is today's fingerprint (None
    when it cannot be computed), to say which checkpoints it would resume."""
    production, production_error = parts.production, parts.production_error
    checks = [
        binary_check(config, parts.calibration_version, production),
        model_check(config, production),
        _port(config, parts),
        _state_dir(layout),
        _production_check(config, production, production_error, parts.poll_production),
    ]
    checks.extend(_checkpoints(layout, today))
    return checks


def _port(config: LocalModels, parts: ReadinessParts) -> Check:
    port = config.calibration_port
    try:
        parts.port_free(port, PORT_ADVICE)
    except BadInput as exc:
        text = str(exc)
        detail, _, _advice = text.partition("; ")
        return Check("calibration port", FAIL, detail, PORT_ADVICE)
    except RunnerError as exc:
        return Check("calibration port", WARN, str(exc))
    return Check("calibration port", OK, f"{port} free")


def _state_dir(layout: StateLayout) -> Check:
    name = "state folder"
    try:
        probe = layout.progress / WRITE_PROBE
        atomic_write_text(probe, "")
        probe.unlink(missing_ok=True)
    except (OSError, VibeyError) as exc:
        return Check(
            name,
            FAIL,
            f"{layout.root} is not writable: {exc}",
            "set $VIBEY_GH_SLOTS_DIR to a folder this user can write",
        )
    return Check(name, OK, f"{layout.root} writable")


def _production_check(
    config: LocalModels,
    production: RunnerInfo | None,
    error: str | None,
    poll: Callable[[LocalModels], ProductionState | None],
) -> Check:
    name = "production"
    if production is None:
        return Check(
            name,
            WARN,
            f"not answering at {config.production}: {error}",
            "calibrate runs without it (keyed to the calibration binary); `slots allowed` "
            "needs it running to match the evidence",
        )
    state = poll(config)
    if state is not None and not state.reachable:
        return Check(
            name,
            WARN,
            f"not answering at {config.production} ({production.kind} "
            f"{production.version or '?'} installed)",
            "calibrate runs without it; start it to serve lanes with the answer",
        )
    busy = ""
    todo = None
    status = OK
    if state is not None and state.busy:
        busy = f"; holds {', '.join(state.models) or 'a model'} now"
        todo = "calibrate starts only while production is idle (--wait-idle SECONDS waits)"
        status = WARN
    slots = production.serving_slots
    if slots is None:
        serving = "serving slots unknown"
        if todo is None:
            status = WARN
            todo = "`slots allowed` cannot tell whether production already serves its answer"
    else:
        serving = f"serving {slots} slot(s)"
    return Check(
        name, status, f"{production.kind} {production.version or '?'}, {serving}{busy}", todo
    )


def _poll(config: LocalModels) -> ProductionState | None:
    try:
        return runner_kind(config.runner).watch(config.production).poll()
    except (VibeyError, OSError):
        return None


def _checkpoints(layout: StateLayout, today: str | None) -> list[Check]:
    found = list_checkpoints(layout.progress)
    now = time.time()
    checks = []
    for checkpoint in found:
        age_days = max(0.0, now - checkpoint.modified) / 86_400
        size = f"{checkpoint.size_bytes / 1e6:.1f} MB"
        what = f"{checkpoint.path.name}: {checkpoint.steps} step(s), {size}, {age_days:.0f} d old"
        if checkpoint.problem is not None:
            checks.append(
                Check(
                    "checkpoint", WARN, f"{what}; unreadable", "vibey-gh slots forget --checkpoints"
                )
            )
        elif today is not None and checkpoint.fingerprint == today:
            checks.append(Check("checkpoint", OK, f"{what}; the same calibrate command resumes it"))
        elif today is None:
            checks.append(Check("checkpoint", OK, f"{what}; fingerprint {checkpoint.fingerprint}"))
        else:
            checks.append(
                Check(
                    "checkpoint",
                    WARN,
                    f"{what}; orphaned: today's fingerprint does not resume it",
                    "vibey-gh slots forget --checkpoints",
                )
            )
    return checks


def doctor_checks(
    config: LocalModels,
    layout: StateLayout,
    production: RunnerInfo | None,
    production_error: str | None,
    today: str | None,
) -> list[Check]:
    """`calibration_checks` with the real parts, as `doctor` runs them."""
    parts = real_parts(layout, production, production_error)(config)
    return calibration_checks(config, layout, parts, today)


def check_lines(checks: list[Check]) -> list[str]:
    """What calibrate needs, one line each, and what to do under each line not ok."""
    failed = sum(check.status == "fail" for check in checks)
    headline = "ready" if not failed else f"{failed} problem(s) to fix first"
    lines = [f"calibrate needs ({headline}):"]
    for check in checks:
        lines.append(f"  {check.status:<4} {check.name:<{CHECK_WIDTH}} {check.detail}")
        if check.todo and check.status != "ok":
            lines.append(f"       {'':<{CHECK_WIDTH}} → {check.todo}")
    return lines


def doctor_json(
    report: dict[str, object], state_dir: Path, checks: list[Check]
) -> dict[str, object]:
    """`doctor --json`: the device's report, the state folder, and what calibrate needs
    (`calibrate.ready` for scripts: no check failed)."""
    ready = not any(check.status == FAIL for check in checks)
    calibrate = {"ready": ready, "checks": [as_json(check) for check in checks]}
    return {**report, "state_dir": str(state_dir), "calibrate": calibrate}


def doctor_lines(report: list[str], state_dir: Path, checks: list[Check]) -> list[str]:
    """`doctor`: the device's report with the state folder under its first line, then what
    calibrate needs."""
    return [*report[:1], f"state folder: {state_dir}", *report[1:], *check_lines(checks)]


__all__ = [
    "FAIL",
    "OK",
    "WARN",
    "Check",
    "ReadinessParts",
    "calibration_checks",
    "check_lines",
    "doctor_checks",
    "doctor_json",
    "doctor_lines",
    "real_parts",
]
