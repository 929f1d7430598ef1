"""The storm's idle-time soak: a soak `slots allowed` requested (`require_soak`), run like an
idle-time calibration: with `if_requested`, on the storm's corpus, under the model lock held
exclusively, at the N and for the duration the request names."""

from __future__ import annotations

from collections.abc import Callable

from ..config import LocalModels
from ..errors import BadInput
from ..interfaces.durations import format_duration
from ..slots.evidence.requests import RequestDocument
from ..slots.measurement.calibration_setup import Environment
from ..slots.measurement.progress_lines import LineProgress
from ..slots.soak.record import SoakOutcome
from ..slots.soak.request import SoakRequest
from ..slots.soak.soak import run_soak
from ..state import StateLayout
from .calibration import IdleRun, idle_request, storm_corpus
from .lock import model_lock


def _asked(request: RequestDocument) -> tuple[int, float]:
    slots, duration = request.settings.get("slots"), request.settings.get("duration_s")
    if not isinstance(slots, int) or not isinstance(duration, int | float) or duration <= 0:
        raise BadInput(f"soak request {request.fingerprint} names no N and duration")
    return slots, float(duration)


def soak_idle(
    run: IdleRun,
    request: RequestDocument,
    *,
    environment: Callable[[LocalModels, StateLayout | None], Environment],
) -> SoakOutcome:
    slots, duration = _asked(request)
    with model_lock(run.layout, exclusive=True, wait=False, role="soak"):
        corpus, origin = storm_corpus(
            run.records_root, run.done_folder, run.config.window, run.plan
        )
        run.log(f"soak: N={slots} for {format_duration(duration)}, corpus {origin}")
        progress = LineProgress(lambda text: run.log(f"soak: {text}"), every_s=300.0)
        return run_soak(
            SoakRequest(idle_request(run.config, corpus, run.plan), duration, slots),
            environment(run.config, run.layout),
            progress,
        )
