"""A calibration killed mid-write leaves temporary files; the next one removes them wherever a
calibration writes (state root, checkpoints, evidence and its history, requests, run folders,
caches) and nothing else."""

from __future__ import annotations

from pathlib import Path

from vibey_gh.files import TEMP_PREFIX
from vibey_gh.slots.measurement.calibrate import remove_leftover_temp_files
from vibey_gh.state import StateLayout


def test_leftovers_are_removed_in_every_folder_a_calibration_writes(tmp_path: Path) -> None:
    layout = StateLayout(tmp_path / "state")
    folders = [
        layout.root,
        layout.progress,
        layout.evidence,
        layout.requests,
        layout.cache / "figures",
        layout.evidence / "history" / "0123456789abcdef",
        layout.runs / "20261201T000000Z-0123456789abcdef" / "step-00-n1-a1",
    ]
    leftovers, kept = [], []
    for folder in folders:
        folder.mkdir(parents=True, exist_ok=True)
        leftovers.append(folder / f"{TEMP_PREFIX}half-written")
        kept.append(folder / "finished.json")
    for path in leftovers + kept:
        path.write_text("{}")
    remove_leftover_temp_files(layout)
    assert [p for p in leftovers if p.exists()] == []
    assert all(p.exists() for p in kept)
