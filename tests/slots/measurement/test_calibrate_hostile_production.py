"""A calibration whose production turns hostile mid-sweep (deep JSON, NaN, a huge body, a drip,
garbage on its port) goes on: production then reads as unreachable, so not busy, and the sweep
is recorded as usual. The calibration runner is the simulated one."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from tests.support.hostile import HOSTILE_KINDS, HostileServer, hostile_production
from tests.support.progress import Recorder
from tests.support.simulated import calibrate, simulated_config
from vibey_gh.state import StateLayout


class TurnsHostile(Recorder):
    """Turns production hostile once the first step has started."""

    def __init__(self, production: HostileServer, kind: str) -> None:
        super().__init__()
        self.production = production
        self.kind = kind

    def step_started(self, index: int, slots: int, attempt: int, turns: int) -> None:
        super().step_started(index, slots, attempt, turns)
        self.production.kind = self.kind


@pytest.mark.parametrize("kind", HOSTILE_KINDS)
def test_production_turning_hostile_mid_sweep_does_not_stop_the_calibration(
    tmp_path: Path, layout: StateLayout, kind: str
) -> None:
    with hostile_production("idle") as production:
        config = replace(simulated_config(), production_url=production.url)
        recorder = TurnsHostile(production, kind)
        _, outcome = calibrate(tmp_path, layout, config, recorder, slots=(1, 1))
        asked_while_hostile = production.requests
    assert production.kind == kind and asked_while_hostile > 0
    assert outcome.recorded and outcome.complete, outcome.reason
    assert [slots for _, slots, _ in recorder.started] == [1, 1]
    assert outcome.evidence is not None and outcome.evidence.exists()
