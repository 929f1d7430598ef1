"""Calibrations on the simulated runner: a real server in a child process over a capacity
model, so the whole loop runs in seconds and the knee is known."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.corpus import TINY_WINDOW, tiny_corpus
from tests.support.ports import free_port
from tests.support.progress import Recorder
from vibey_gh.composition import build_environment
from vibey_gh.config import LocalModels, SimulatedModel
from vibey_gh.interfaces.bounds import Bounds
from vibey_gh.slots.corpus.corpus import Corpus
from vibey_gh.slots.measurement.calibrate import run_calibration
from vibey_gh.slots.measurement.calibration_setup import CalibrationOutcome, CalibrationRequest
from vibey_gh.state import StateLayout

MAX_TOKENS = 64


def simulated_config(
    *, min_step_seconds: float = 0.3, max_step_seconds: float = 1.0, **model: Any
) -> LocalModels:
    """The simulated runner (knee 2, no noise unless given) on free ports; the production URL
    points at nothing (idle). Steps of 0.3 s to 1 s: a step of the tiny corpus holds every
    turn at one slot in about 0.3 s, and a test of the sweep's logic needs no tighter interval
    than 1 s gives; a test of what a precision decides asks for longer steps."""
    capacity = {"knee": 2, "noise": 0.0, "tokens_per_second": 2000.0, **model}
    return LocalModels(
        concurrent_runs="measured",
        runner="simulated",
        window=TINY_WINDOW,
        calibration_port=free_port(),
        production_url=f"http://127.0.0.1:{free_port()}",
        min_step_seconds=min_step_seconds,
        max_step_seconds=max_step_seconds,
        simulated=SimulatedModel(**capacity),
        bounds=Bounds(min_gain=0.10),
    )


def calibrate(
    tmp_path: Path,
    layout: StateLayout,
    config: LocalModels,
    recorder: Recorder | None = None,
    **request: Any,
) -> tuple[Corpus, CalibrationOutcome]:
    """Calibrate on the tiny corpus; `env=` replaces the wired environment, the other keywords
    go to the CalibrationRequest (max_slots 4 unless given)."""
    corpus, _ = tiny_corpus(tmp_path)
    env = request.pop("env", None) or build_environment(config, layout)
    req = CalibrationRequest(
        config=config,
        corpus=corpus,
        window=TINY_WINDOW,
        max_tokens=MAX_TOKENS,
        **{"max_slots": 4, **request},
    )
    return corpus, run_calibration(req, env, recorder or Recorder(), bounds_source=lambda: config)
