"""One real embedded calibration for the whole run, for the tests that only read what it
recorded (its evidence, its summary, what the runner reported): a sweep on the embedded
runner costs tens of seconds of CPU, and reading it again costs nothing."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from msgspec.structs import replace

from vibey_gh.config import LocalModels
from vibey_gh.slots.corpus.corpus import Corpus
from vibey_gh.slots.measurement.calibration_setup import CalibrationOutcome
from vibey_gh.state import StateLayout

from .corpus import TINY_WINDOW, tiny_corpus
from .ports import free_port
from .progress import Quiet

SHARED_MAX_TOKENS = 8  # what its readers check is what was recorded, not what was said
SHARED_SLOTS = (1, 1, 2)


@dataclass(frozen=True)
class SharedCalibration:
    """A finished embedded sweep N = 1, 1, 2 on the tiny corpus's two shallowest segments,
    production down."""

    corpus: Corpus
    config: LocalModels
    layout: StateLayout
    out_dir: Path
    outcome: CalibrationOutcome


@pytest.fixture(scope="session")
def embedded_calibration(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SharedCalibration]:
    """Run once, in a state dir and config lookup of its own (set here: the per-test isolation
    is not in force yet when a fixture shared by the whole run starts)."""
    from vibey_gh.composition import build_environment
    from vibey_gh.slots.measurement.calibrate import run_calibration
    from vibey_gh.slots.measurement.calibration_setup import CalibrationRequest

    root = tmp_path_factory.mktemp("shared-calibration")
    with pytest.MonkeyPatch.context() as env:
        env.setenv("VIBEY_GH_SLOTS_DIR", str(root / "state"))
        env.setenv("XDG_CONFIG_HOME", str(root / "config"))
        env.setenv("XDG_STATE_HOME", str(root / "xdg-state"))
        env.delenv("VIBEY_GH_CONFIG", raising=False)
        env.chdir(root)
        # the report as the light install writes it, as for every calibration in this process
        env.setattr(
            "vibey_gh.slots.report.plotting.plots.plots_available",
            lambda find_module=None: False,
        )
        drawn, _ = tiny_corpus(root)
        corpus = replace(drawn, segments=drawn.segments[:2])  # the two shallowest: four turns
        layout = StateLayout(root / "state")
        config = LocalModels(
            concurrent_runs="measured",
            runner="embedded",
            window=TINY_WINDOW,
            calibration_port=free_port(),
            production_url=f"http://127.0.0.1:{free_port()}",
            min_step_seconds=0.1,  # one pass per one-slot step on the tiny corpus
        )
        request = CalibrationRequest(
            config=config,
            corpus=corpus,
            window=TINY_WINDOW,
            max_tokens=SHARED_MAX_TOKENS,
            slots=SHARED_SLOTS,
            out_dir=root / "out",
        )
        outcome = run_calibration(request, build_environment(config, layout), Quiet())
    yield SharedCalibration(corpus, config, layout, root / "out", outcome)
