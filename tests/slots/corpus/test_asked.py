"""What `slots corpus` is asked, checked where the options value is built."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from vibey_gh.errors import BadInput
from vibey_gh.slots.corpus.asked import CorpusOptions

OUT = Path("corpus.json")


def test_recorded_work_is_drawn_as_whole_runs_and_specs_as_segments() -> None:
    assert CorpusOptions(OUT, from_sessions=(Path("s"),)).drawn_shape == "runs"
    assert CorpusOptions(OUT, specs=(Path("specs"),)).drawn_shape == "segments"
    assert CorpusOptions(OUT, demo=True, shape="runs").drawn_shape == "runs"


def test_a_runner_counts_only_filled_spec_runs_and_sessions_asked_to() -> None:
    assert CorpusOptions(OUT, demo=True, fill_window=True).counting
    assert not CorpusOptions(OUT, demo=True, fill_window=True, count_with="estimate").counting
    assert not CorpusOptions(OUT, from_sessions=(Path("s"),)).counting
    assert CorpusOptions(OUT, from_sessions=(Path("s"),), count_with="runner").counting


@pytest.mark.parametrize(
    ("build", "said"),
    [
        (lambda: CorpusOptions(OUT, demo=True, specs=(Path("s"),)), "--demo uses the shipped"),
        (lambda: CorpusOptions(OUT, demo=True, sample_specs=3), "--demo uses the shipped"),
        (lambda: CorpusOptions(OUT, from_lanes=(Path("l"),), segment_turns=2), "--segment-turns"),
        (lambda: CorpusOptions(OUT, specs=(Path("s"),), count_with="runner"), "--count-with is"),
    ],
)
def test_what_cannot_be_built_is_refused_before_anything_is_read(
    build: Callable[[], CorpusOptions], said: str
) -> None:
    with pytest.raises(BadInput, match=said):
        build()
