"""The CLI's edge without click: how results and library errors are printed.

Shared by the click commands and by the `slots allowed` fast path (`entry.py`), so both print
the same bytes.
"""

from __future__ import annotations

import json

from ..errors import VibeyError


def json_text(data: object) -> str:
    """The JSON every `--json` prints: indented, sorted keys, paths as strings."""
    return json.dumps(data, indent=2, sort_keys=True, default=str)


def error_line(exc: BaseException) -> tuple[str, int] | None:
    """The one-line message and exit code for an error the CLI reports, else None.

    Library errors carry their own exit code; OS errors the library let through exit 1 and
    name the file involved.
    """
    if isinstance(exc, VibeyError):
        return str(exc), exc.exit_code
    if isinstance(exc, OSError):
        where = f" ({exc.filename})" if exc.filename else ""
        return f"{exc.strerror or exc}{where}", 1
    return None
