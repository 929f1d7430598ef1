from __future__ import annotations

import math

from vibey_gh.slots.judging.statistics.closed_system import Prediction
from vibey_gh.slots.report.tables.model_column import model_cell, model_gain


def test_the_model_column_gives_the_gain_at_each_n_and_says_when_it_is_only_a_ceiling() -> None:
    found = Prediction(0.0, 2.0, True, (1.0, 2.0, 2.0), 2)
    assert model_gain(found, 1) is None and model_gain(found, 2) == 1.0
    assert model_gain(found, 4) is None and model_gain(None, 2) is None
    assert model_cell(1.0, True) == "+100%"
    assert model_cell(2.0, False) == "≤ +200%"
    assert model_cell(None, True) == "—"
    unbounded = Prediction(0.0, math.inf, False, (1.0, 2.0), None)
    assert unbounded.to_json()["runner_knee"] is None
