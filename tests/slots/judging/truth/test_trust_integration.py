"""A real embedded runner with a window too small for the corpus: its over-window refusals are
real, the sweep stops at the first step, exit 1, and nothing is recorded (integration)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from msgspec.structs import replace

from tests.support.corpus import embedded_work_dir, tiny_corpus
from vibey_gh.config import MIN_WINDOW
from vibey_gh.files import canonical_json
from vibey_gh.slots.corpus.corpus import Corpus, write_corpus
from vibey_gh.slots.corpus.turns import sha256_text
from vibey_gh.state import StateLayout

pytestmark = pytest.mark.integration


def underestimated(corpus: Corpus, depth: int) -> Corpus:
    """The corpus with every depth estimate at `depth`: estimates are counted in characters,
    and one that undershoots the runner's own token count is what lets an over-window turn
    reach the runner."""
    segments = tuple(
        replace(s, turns=tuple(replace(t, depth_estimate=depth) for t in s.turns))
        for s in corpus.segments
    )
    # drawn for the window it is calibrated at: the window check passes, the runner refuses
    unhashed = replace(corpus, segments=segments, window=MIN_WINDOW, corpus_sha256="")
    return replace(unhashed, corpus_sha256=sha256_text(canonical_json(unhashed.body_json())))


def test_a_corpus_the_window_refuses_stops_the_sweep_at_once(
    tmp_path: Path, isolated_state: Path
) -> None:
    corpus, _ = tiny_corpus(tmp_path)
    corpus_path = tmp_path / "tight.json"
    write_corpus(underestimated(corpus, MIN_WINDOW - 56), corpus_path)
    command = [sys.executable, "-m", "vibey_gh.cli.main", "slots", "calibrate"]
    command += ["--corpus", str(corpus_path), "--window", str(MIN_WINDOW), "--slots", "1,1,2"]
    command += ["--max-tokens", "8", "--out", str(tmp_path / "out"), "--min-step-seconds", "0.1"]
    env = {**os.environ, "VIBEY_GH_SLOTS_DIR": str(isolated_state)}
    work = embedded_work_dir(tmp_path)
    done = subprocess.run(command, env=env, cwd=work, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stderr
    lines = done.stderr.strip().splitlines()
    assert lines[-1].startswith("error: the corpus does not fit this window: "), done.stderr
    assert f"longer than the {MIN_WINDOW}-token window at one slot" in lines[-1]
    layout = StateLayout(isolated_state)
    assert not list(layout.evidence.glob("*")) and not list(layout.progress.glob("*.json"))
    assert not (tmp_path / "out").exists()
