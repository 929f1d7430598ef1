"""`slots calibrate --split-window` at the CLI edge: a what-if needs somewhere to go."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from tests.support.corpus import tiny_corpus
from vibey_gh.cli.main import cli


def test_a_split_window_what_if_without_out_is_bad_input(
    tmp_path: Path, isolated_state: Path
) -> None:
    _, corpus_path = tiny_corpus(tmp_path)
    result = CliRunner().invoke(
        cli, ["slots", "calibrate", "--corpus", str(corpus_path), "--split-window"]
    )
    assert result.exit_code == 2
    assert "--split-window is a what-if, never evidence: give --out FOLDER" in result.output
    evidence = isolated_state / "evidence"
    assert not evidence.exists() or not any(evidence.iterdir())
