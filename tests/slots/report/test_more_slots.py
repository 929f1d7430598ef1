"""An ideal N at the largest N tried says that more slots might pay, and how to measure them."""

from __future__ import annotations

from vibey_gh.slots.report.summary import more_slots_line


def test_the_largest_n_tried_as_the_ideal_says_more_slots_might_pay() -> None:
    line = more_slots_line(4, 4, "reached the largest slot count to try (4)")
    assert line is not None and "more slots might pay" in line
    assert "`vibey-gh slots calibrate --corpus FILE --max-slots 8`" in line
    explicit = more_slots_line(4, 4, "every requested step was measured")
    assert explicit is not None


def test_a_sweep_that_stopped_on_its_own_or_below_its_largest_n_says_nothing() -> None:
    assert more_slots_line(3, 4, "reached the largest slot count to try (4)") is None
    assert more_slots_line(4, 4, "stopped at 4 slots: memory") is None
    assert more_slots_line(4, 4, "stopped after 2 steps without a 10% gain") is None
    assert more_slots_line(1, 1, "every requested step was measured") is None
    assert more_slots_line(4, 4, None) is None
