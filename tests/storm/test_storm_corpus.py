"""A storm's idle corpus, built from the specs in done/, in bounded work whatever they hold."""

from __future__ import annotations

from pathlib import Path

import pytest

from vibey_gh.errors import BadInput
from vibey_gh.lanes import globs
from vibey_gh.storm.calibration import CalibrationPlan, storm_corpus

TEN_ANY_DEPTH = "**/" * 10 + "x.py"


def deep_repository(root: Path, depth: int = 40) -> Path:
    folder = root
    for level in range(depth):
        folder = folder / f"d{level}"
        folder.mkdir(parents=True)
        (folder / "x.py").write_text(f"LEVEL = {level}\n", encoding="utf-8")
    return root


def done_spec(done: Path, repository: Path) -> None:
    done.mkdir(parents=True)
    (done / "deep.toml").write_text(
        'id = "deep"\ntitle = "Deep"\ntask = "Say what each level holds."\n'
        f'repository = "{repository}"\nfiles = ["{TEN_ANY_DEPTH}"]\n',
        encoding="utf-8",
    )


def test_ten_any_depth_wildcards_over_a_deep_tree_still_give_a_corpus(tmp_path: Path) -> None:
    done_spec(tmp_path / "done", deep_repository(tmp_path / "repo"))
    plan = CalibrationPlan(segments_per_stratum=1, segment_turns=1)
    corpus, origin = storm_corpus(tmp_path / "no-records", tmp_path / "done", 65536, plan)
    assert origin.startswith("from the 1 specs in done/")
    assert corpus.turn_count >= 1


def test_a_spec_over_its_budget_is_refused_saying_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    done_spec(tmp_path / "done", deep_repository(tmp_path / "repo"))
    monkeypatch.setattr(globs, "MAX_MATCH_STEPS", 500)
    with pytest.raises(BadInput, match=r"spec deep \(.*deep\.toml\): matching its globs against"):
        storm_corpus(tmp_path / "no-records", tmp_path / "done", 65536, CalibrationPlan())
