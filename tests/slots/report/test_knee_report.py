"""The report, `slots show` and its JSON name the knee and what the steps past it add."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console

from tests.slots.gate.test_allowed import config, deps_for
from tests.slots.gate.test_allowed_knee import record_plateau
from tests.support.rendering import report_of
from vibey_gh.interfaces.bounds import Bounds
from vibey_gh.interfaces.schema import as_json
from vibey_gh.slots.evidence.store import load_evidence
from vibey_gh.slots.report.show import gather_show
from vibey_gh.slots.report.terminal.show_text import render_answer

PLATEAU = "N=5 and 6 add +5.0% and +2.5% more turns/h, each over the best step before it"


def test_show_names_the_knee_and_the_plateau(tmp_path: Path) -> None:
    record_plateau(tmp_path)
    answer = gather_show(config=config("measured"), deps=deps_for(tmp_path))
    assert answer.shown is not None
    buffer = io.StringIO()
    console = Console(file=buffer, width=400, highlight=False, color_system=None)
    render_answer(answer, console, markdown=True)
    text = buffer.getvalue()
    assert "ideal N = 4 — 4 slots stayed inside every bound" in text
    assert f"the knee is 4: {PLATEAU}: below min_gain (10%)" in text


def test_show_json_carries_the_knee(tmp_path: Path) -> None:
    record_plateau(tmp_path)
    answer = gather_show(config=config("measured"), deps=deps_for(tmp_path))
    assert answer.shown is not None
    data = as_json(answer.shown.output())
    assert data["ideal"] == 4
    knee = data["knee"]
    assert knee["slots"] == 4
    assert [(p["slots"], round(p["adds"], 3), p["below_min_gain"]) for p in knee["past"]] == [
        (5, 0.05, True),
        (6, 0.025, True),
    ]
    assert knee["plateau"].startswith(PLATEAU)


def test_the_report_explains_the_knee_with_this_sweep(tmp_path: Path) -> None:
    evidence = load_evidence(record_plateau(tmp_path))
    report = report_of(evidence, Bounds())
    assert "**Ideal N = 4.**" in report
    assert "The ideal N is the knee, N=4: the last step whose whole turns/h interval" in report
    assert f"Past the knee, {PLATEAU}: below min_gain (10%)." in report
    # the decision recorded with the evidence was on the plateau: the report says it differs
    assert "When it was recorded this evidence supported 6 (6 slots stayed inside every " in report
    assert "it is judged here by today's bounds and rule." in report


def test_steps_past_the_knee_are_not_called_qualifies(tmp_path: Path) -> None:
    record_plateau(tmp_path)
    answer = gather_show(config=config("measured"), deps=deps_for(tmp_path))
    assert answer.shown is not None
    buffer = io.StringIO()
    console = Console(file=buffer, width=400, highlight=False, color_system=None)
    render_answer(answer, console, markdown=False)
    verdicts = buffer.getvalue().split("verdicts:")[1].splitlines()
    said: dict[str, str] = {}
    for line in verdicts:  # the first line per step: its verdict (latency lines follow)
        if line.strip().startswith("N="):
            said.setdefault(line.split()[0], line)
    assert " qualifies" in said["N=4"], "the knee qualifies"
    for past in ("N=5", "N=6"):
        assert " past the knee" in said[past] and "qualifies" not in said[past]
    report = report_of(load_evidence(record_plateau(tmp_path / "again")), Bounds())
    assert "(past the knee)" in report and ": past the knee." in report


def test_the_headline_gain_carries_its_interval_and_thousands_apart(tmp_path: Path) -> None:
    import re

    record_plateau(tmp_path)
    answer = gather_show(config=config("measured"), deps=deps_for(tmp_path))
    assert answer.shown is not None
    reason = str(as_json(answer.shown.output())["reason"])
    said = re.search(r"served ([\d,.]+) turns/h, ([+-]\d+%) \(([+-]\d+%) to ([+-]\d+%)\)", reason)
    assert said is not None, reason
    rate, point, low, high = said.groups()
    assert "." not in rate and (float(rate.replace(",", "")) < 1000 or "," in rate)
    assert int(low[:-1]) <= int(point[:-1]) <= int(high[:-1])
