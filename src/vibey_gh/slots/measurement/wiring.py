"""Assemble a calibration's Environment from the config (for the composition root and tests)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ...clock import SYSTEM_CLOCK, Clock
from ...config import LocalModels
from ...state import StateLayout
from ..corpus.corpus import Corpus, build_demo_corpus, load_corpus
from ..evidence.fingerprint import compute_fingerprint
from ..judging.records import LogEventRecord
from .calibration_setup import Environment

if TYPE_CHECKING:
    from ...platforms.probes import PlatformProbes


def log_source(log_path: Path, runner_kind: str) -> Callable[[], list[LogEventRecord]]:
    """New events of the runner's log since the last call, as evidence records."""
    from ...runners.logscan import LogTail

    tail = LogTail(log_path, runner_kind)

    def new_events() -> list[LogEventRecord]:
        return [
            LogEventRecord(kind=e.kind, text=e.text, values=dict(e.values))
            for e in tail.new_events()
        ]

    return new_events


def build_environment(
    config: LocalModels,
    layout: StateLayout | None = None,
    probes: PlatformProbes | None = None,
    clock: Clock = SYSTEM_CLOCK,
) -> Environment:
    """A calibration's world for `config`: the real one, on this machine's probes unless given
    (the composition root, `vibey_gh.composition`, hands in its own)."""
    from ...platforms.probes import PlatformProbes
    from ...runners.binary_identity import identify_calibration_binary
    from ...runners.drift import production_drift
    from ...runners.registry import runner_kind

    probes = probes or PlatformProbes.detect()
    layout = layout or StateLayout.from_env()
    kind = runner_kind(config.runner)
    # the embedded and simulated calibration runners are the installed package production runs
    separate_binary = not kind.calibrates_this_package
    return Environment(
        layout=layout,
        clock=clock,
        device=probes.device.describe(),
        production_identity=lambda: kind.identify_production(config, layout),
        production=kind.watch(config.production),
        memory=probes.memory,
        runner=kind.calibration_runner(config=config),
        log_source=log_source,
        fingerprint_of=compute_fingerprint,
        calibration_watch=kind.watch,
        calibration_identity=(
            (lambda: identify_calibration_binary(config, layout)) if separate_binary else None
        ),
        production_drift=lambda: production_drift(config),
        production_footprint=probes.production_footprint(
            config.production, kind.default_port, kind.process_names
        ),
        calibration_model_bytes=lambda: model_file_bytes(config),
        sensors=probes.sensors,
    )


def model_file_bytes(config: LocalModels) -> int | None:
    """The size of the calibration runner's model file: a GGUF path (llama-server, embedded);
    None for Ollama's named models, which Ollama itself places (and unloads when idle)."""
    from ...runners.registry import runner_kind

    return runner_kind(config.runner).model_file_bytes(config)


def demo_corpus(window: int) -> Corpus:
    return build_demo_corpus(window=window)


def load_corpus_for(path: Path) -> Corpus:
    return load_corpus(path)
