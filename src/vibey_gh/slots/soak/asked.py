"""`slots soak` below its rendering: the soak its options ask for, run under the model lock."""

from __future__ import annotations

from ...config import load_config
from ...errors import BadInput
from ..measurement.options import CalibrationOptions, CalibrationWorld, LockedRun, resolve_request
from .record import SoakOutcome
from .request import SoakRequest
from .soak import run_soak


def soak_as_asked(
    options: CalibrationOptions,
    duration_s: float,
    slots: int | None,
    force: bool,
    world: CalibrationWorld,
    run: LockedRun,
) -> tuple[SoakRequest, SoakOutcome | None]:
    """`slots soak`: hold N (None: the evidence's ideal) for `duration_s`, run through `run`."""
    if slots is not None and slots < 1:
        raise BadInput(f"--slots must be 1 or more, not {slots}")
    calibration = resolve_request(options, load_config(), lambda _text: None)
    request = SoakRequest(calibration, duration_s, slots, force)
    env = world.calibration_environment(calibration.config, None)
    outcome = run(env.layout, lambda progress: run_soak(request, env, progress))
    return request, outcome
