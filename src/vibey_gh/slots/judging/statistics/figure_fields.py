"""The kinds of value stored figures hold, each declared with its range.

Stored figures are derived data anyone could edit: a count is a whole number ≥ 0, a rate or a
standard error a finite number ≥ 0, a share between 0 and 1. The figures' records declare
their fields with these types, so reading them (`interfaces.schema.checked`) refuses anything
else with `MalformedJson` naming the field, and a damaged store is rebuilt from the evidence.
"""

from __future__ import annotations

from typing import Annotated

from msgspec import Meta

RUNS_PER_HOUR = "runs/h"
TURNS_PER_HOUR = "turns/h"

Count = Annotated[int, Meta(ge=0)]
# bounded, so infinity is refused (the bounded reader refuses it in a file too); no rate,
# duration or standard error comes near
Amount = Annotated[float, Meta(ge=0.0, le=1e300)]
Share = Annotated[float, Meta(ge=0.0, le=1.0)]
# which figure decides: turns/h where absent (figures from before runs per hour)
Figure = Annotated[str, Meta(pattern="^(turns/h|runs/h)$")]
