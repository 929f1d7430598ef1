"""`slots soak` below its rendering: the soak its options ask for, run under the model lock."""

from __future__ import annotations

from ...config import load_config
from ...errors import BadInput
from ...interfaces.durations import parse_duration
from ..measurement.options import CalibrationOptions, CalibrationWorld, LockedRun, resolve_request
from ..report.soak_view import trend_text
from .record import SoakOutcome
from .request import SoakRequest
from .soak import run_soak


def soak_as_asked(
    options: CalibrationOptions,
    duration: str,
    slots: int | None,
    force: bool,
    world: CalibrationWorld,
    run: LockedRun,
) -> tuple[SoakRequest, SoakOutcome | None]:
    """`slots soak`: hold N (None: the evidence's ideal) for `duration` (8h, 30m, 1h30m, 90s),
    run through `run`."""
    duration_s = parse_duration(duration)
    if slots is not None and slots < 1:
        raise BadInput(f"--slots must be 1 or more, not {slots}")
    calibration = resolve_request(options, load_config(), lambda _text: None)
    request = SoakRequest(calibration, duration_s, slots, force)
    env = world.calibration_environment(calibration.config, None)
    outcome = run(env.layout, lambda progress: run_soak(request, env, progress))
    return request, outcome


def soak_lines(request: SoakRequest, outcome: SoakOutcome) -> list[str]:
    """What `slots soak` says when it ends: skipped, paused, or held and how."""
    if outcome.skipped:
        return [f"nothing to do: {outcome.reason} ({outcome.fingerprint})"]
    if outcome.path is None:
        return [f"soak paused at N={outcome.slots}: {outcome.reason}"]
    held = "HOLDS" if outcome.holds else (outcome.verdict or "unknown").upper()
    # a soak too short to tell says so, and how long a soak would decide it
    trend = outcome.judgement.get("trend_per_hour")
    lines = [f"soak at N={outcome.slots}: {held}", *(f"  {r}" for r in outcome.reasons)]
    lines.append(f"  throughput trend: {trend_text(trend, outcome.measured_s, request.window_s)}")
    lines += [f"  {unjudged}" for unjudged in outcome.judgement.get("unjudged", [])]
    lines += [f"soak:    {outcome.path}", f"see it:  vibey-gh slots show {outcome.fingerprint}"]
    return lines
