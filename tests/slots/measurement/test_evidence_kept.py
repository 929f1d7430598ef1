"""No calibration loses a measured sweep: a paused one never replaces complete evidence, and a
complete one replaces it only after keeping it in the fingerprint's bounded history."""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any

from tests.support.corpus import TINY_WINDOW, shallow_tiny_corpus, tiny_corpus
from tests.support.evidence import RECORDED
from vibey_gh.config import LocalModels
from vibey_gh.interfaces.identity import DeviceFacts, RunnerInfo
from vibey_gh.slots.corpus.corpus import Corpus
from vibey_gh.slots.evidence.fingerprint import Fingerprint
from vibey_gh.slots.evidence.history import HISTORY_KEPT, history_folder, list_history
from vibey_gh.slots.evidence.store import evidence_path, load_evidence
from vibey_gh.slots.measurement.calibration_setup import (
    CalibrationOutcome,
    CalibrationRequest,
    Environment,
)
from vibey_gh.slots.measurement.evidence_writer import SweepResult, write_evidence_files
from vibey_gh.state import StateLayout

DAY = 86_400.0
START = 1_796_009_900.0
RECORDED_DOC = load_evidence(RECORDED).document
FINGERPRINT = Fingerprint(RECORDED_DOC.fingerprint, dict(RECORDED_DOC.fingerprint_fields))


class Clock:
    def __init__(self) -> None:
        self.at = START

    def monotonic(self) -> float:
        return 100.0

    def now(self) -> float:
        return self.at

    def sleep(self, seconds: float) -> None:
        return


def _unused(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("the end path does not reach the runner or production")


class Sweeps:
    """Writes sweeps of the recorded steps as a calibration's end path does, a day apart."""

    def __init__(self, root: Path) -> None:
        self.layout = StateLayout(root / "state")
        self.clock = Clock()
        self.env = Environment(
            layout=self.layout,
            clock=self.clock,
            device=DeviceFacts("Test 1", "cpu", 8 << 30, (), "Linux", "6"),
            production_identity=_unused,
            production=_unused,  # type: ignore[arg-type]
            memory=None,
            runner=None,
            log_source=_unused,
            fingerprint_of=_unused,
        )
        self.runs = root / "runs"

    def write(self, corpus: Corpus, *, steps: int | None = None) -> CalibrationOutcome:
        self.clock.at += DAY
        measured = RECORDED_DOC.steps if steps is None else RECORDED_DOC.steps[:steps]
        complete = steps is None
        result = SweepResult(
            fingerprint=FINGERPRINT,
            identity=RunnerInfo(
                "embedded", str(FINGERPRINT.fields["runner_version"]), "model.gguf", "ab" * 32
            ),
            steps=measured,
            method={"slots": [1, 1, 2]},
            stop_reason="every requested step was measured" if complete else None,
            complete=complete,
            run_dir=self.runs,
        )
        req = CalibrationRequest(
            config=LocalModels(), corpus=corpus, window=TINY_WINDOW, max_tokens=8
        )
        return write_evidence_files(req, self.env, result)

    @property
    def evidence(self) -> Path:
        return evidence_path(self.layout, FINGERPRINT.id)


def test_a_paused_sweep_never_replaces_complete_evidence(tmp_path: Path) -> None:
    corpus, _ = tiny_corpus(tmp_path)
    sweeps = Sweeps(tmp_path)
    first = sweeps.write(corpus)
    assert first.recorded and first.replaced is None and first.kept is None
    complete = sweeps.evidence.read_bytes()

    paused = sweeps.write(corpus, steps=1)

    assert sweeps.evidence.read_bytes() == complete
    assert load_evidence(sweeps.evidence).document.complete
    assert not paused.recorded and paused.evidence is None
    assert paused.kept is not None and paused.kept.complete
    assert paused.kept.created_at == START + DAY
    assert list_history(sweeps.layout, FINGERPRINT.id) == []
    (line,) = paused.evidence_change_lines()
    assert line.startswith(f"kept the sweep of {_date(START + DAY)} (ideal {first.ideal}, corpus ")
    assert "a paused sweep never replaces a complete one" in line


def test_a_complete_sweep_on_another_corpus_replaces_and_keeps_the_old(tmp_path: Path) -> None:
    corpus, _ = tiny_corpus(tmp_path)
    (tmp_path / "other").mkdir()
    other, _ = shallow_tiny_corpus(tmp_path / "other")
    assert other.corpus_sha256 != corpus.corpus_sha256
    sweeps = Sweeps(tmp_path)
    first = sweeps.write(corpus)
    old = sweeps.evidence.read_bytes()

    second = sweeps.write(other)

    assert second.recorded and second.other_corpus
    assert load_evidence(sweeps.evidence).document.corpus["sha256"] == other.corpus_sha256
    assert second.replaced is not None
    kept = second.replaced.path
    assert kept.parent == history_folder(sweeps.layout, FINGERPRINT.id)
    assert kept.read_bytes() == old  # byte for byte, still sealed evidence
    assert kept.name.startswith("20261") and corpus.corpus_sha256[:12] in kept.name
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert stat.S_IMODE(kept.parent.stat().st_mode) == 0o700
    (line,) = second.evidence_change_lines()
    assert line.startswith(
        f"replaced the sweep of {_date(START + DAY)} (ideal {first.ideal}, "
        f"corpus {corpus.corpus_sha256[:12]}) — measured on another corpus"
    )
    (listed,) = list_history(sweeps.layout, FINGERPRINT.id)
    assert (listed.usable, listed.complete, listed.ideal) == (True, True, first.ideal)


def test_the_history_keeps_the_last_ten(tmp_path: Path) -> None:
    corpus, _ = tiny_corpus(tmp_path)
    sweeps = Sweeps(tmp_path)
    for _ in range(HISTORY_KEPT + 3):
        sweeps.write(corpus)
    kept = list_history(sweeps.layout, FINGERPRINT.id)
    assert len(kept) == HISTORY_KEPT
    # the newest replaced sweep (the one before the evidence now) is first; the oldest went
    dates = [sweep.created_at for sweep in kept]
    assert dates == sorted(dates, reverse=True)
    assert dates[0] == START + (HISTORY_KEPT + 2) * DAY
    assert dates[-1] == START + 3 * DAY


def test_a_paused_sweep_continued_does_not_fill_the_history(tmp_path: Path) -> None:
    corpus, _ = tiny_corpus(tmp_path)
    sweeps = Sweeps(tmp_path)
    sweeps.write(corpus, steps=1)
    second = sweeps.write(corpus, steps=2)
    assert second.recorded and second.replaced is None
    done = sweeps.write(corpus)
    assert done.recorded and done.replaced is None
    assert list_history(sweeps.layout, FINGERPRINT.id) == []


def test_a_paused_sweep_over_damaged_evidence_keeps_the_damaged_file(tmp_path: Path) -> None:
    corpus, _ = tiny_corpus(tmp_path)
    sweeps = Sweeps(tmp_path)
    sweeps.write(corpus)
    damaged = sweeps.evidence.read_bytes().replace(b'"complete": true', b'"complete": false', 1)
    sweeps.evidence.write_bytes(damaged)
    paused = sweeps.write(corpus, steps=1)
    assert paused.recorded and paused.replaced is not None
    assert not paused.replaced.usable
    assert paused.replaced.path.read_bytes() == damaged


def _date(epoch: float) -> str:
    import time

    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(epoch))


def test_only_the_historys_own_files_are_pruned(tmp_path: Path) -> None:
    import os

    corpus, _ = tiny_corpus(tmp_path)
    sweeps = Sweeps(tmp_path)
    sweeps.write(corpus)
    folder = history_folder(sweeps.layout, FINGERPRINT.id)
    folder.mkdir(parents=True)
    (folder / "00000000T000000Z-a.json").mkdir()
    os.mkfifo(folder / "00000000T000000Z-b.json")
    for _ in range(HISTORY_KEPT + 1):
        sweeps.write(corpus)
    assert (folder / "00000000T000000Z-a.json").is_dir()
    assert (folder / "00000000T000000Z-b.json").exists()
    regular = [sweep for sweep in list_history(sweeps.layout, FINGERPRINT.id) if sweep.usable]
    assert len(regular) == HISTORY_KEPT
