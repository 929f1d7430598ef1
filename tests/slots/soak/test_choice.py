"""Which N a soak holds."""

from __future__ import annotations

import pytest

from vibey_gh.errors import BadInput
from vibey_gh.slots.soak.choice import choose_slots


def test_the_evidence_ideal_unless_told_otherwise() -> None:
    assert choose_slots(None, 3, "the ideal N of e.json", False) == (3, "the ideal N of e.json")
    assert choose_slots(2, 3, "", False) == (2, "--slots")
    assert choose_slots(1, None, "no evidence", False) == (1, "--slots")


def test_above_the_evidence_needs_force() -> None:
    with pytest.raises(BadInput, match="above the evidence's ideal N 3; add --force"):
        choose_slots(4, 3, "", False)
    assert choose_slots(4, 3, "", True) == (4, "--slots (forced)")
    with pytest.raises(BadInput, match="--slots must be 1 or more"):
        choose_slots(0, 3, "", True)
