"""A calibration whose production turns hostile mid-sweep (deep JSON, NaN, a huge body, a drip,
garbage on its port) goes on: production then reads as unreachable, so not busy, and the sweep
is recorded as usual. The calibration runner is the simulated one; one sweep meets every kind,
one kind per step, so each kind is met by a step that has to go on after it."""

from __future__ import annotations

from pathlib import Path

from msgspec.structs import replace

from tests.support.hostile import HOSTILE_KINDS, HostileServer, hostile_production
from tests.support.progress import Recorder
from tests.support.simulated import calibrate, simulated_config
from vibey_gh.state import StateLayout

# one step per kind; knee 5: every step gains, so the sweep is not stopped by a verdict first
SLOTS = (1, 1, 2, 3, 4)
# the production watch polls at 1 Hz: a step of this length is polled at least once
STEP_S = 1.2


class TurnsHostile(Recorder):
    """Turns production hostile once the first step has started, in the next kind at each
    step."""

    def __init__(self, production: HostileServer) -> None:
        super().__init__()
        self.production = production

    def step_started(self, index: int, slots: int, attempt: int, turns: int) -> None:
        super().step_started(index, slots, attempt, turns)
        self.production.kind = HOSTILE_KINDS[index % len(HOSTILE_KINDS)]


def test_production_turning_hostile_mid_sweep_does_not_stop_the_calibration(
    tmp_path: Path, layout: StateLayout
) -> None:
    assert len(SLOTS) == len(HOSTILE_KINDS)
    config = simulated_config(knee=5, min_step_seconds=STEP_S, max_step_seconds=STEP_S)
    with hostile_production("idle") as production:
        recorder = TurnsHostile(production)
        _, outcome = calibrate(
            tmp_path,
            layout,
            replace(config, production_url=production.url),
            recorder,
            slots=SLOTS,
            max_slots=max(SLOTS),
        )
        answered = dict(production.answered)
    assert outcome.recorded and outcome.complete, (outcome.reason, recorder.started)
    assert [slots for _, slots, _ in recorder.started] == list(SLOTS)
    assert outcome.evidence is not None and outcome.evidence.exists()
    # every kind was served to the calibration's watch while its step ran
    assert all(answered.get(kind, 0) > 0 for kind in HOSTILE_KINDS), answered
