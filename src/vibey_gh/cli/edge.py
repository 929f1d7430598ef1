"""The CLI's edge without click: how results are printed, shared by the click commands and
by the `slots allowed` fast path (`entry.py`) so both print the same bytes (and both word
errors with `errors.error_line`)."""

from __future__ import annotations

import json


def json_text(data: object) -> str:
    """The JSON every `--json` prints: indented, sorted keys, paths as strings."""
    return json.dumps(data, indent=2, sort_keys=True, default=str)
