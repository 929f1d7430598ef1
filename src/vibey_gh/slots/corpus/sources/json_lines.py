"""The files agents recorded (`input_files`), and JSON Lines read one record at a time:
session logs reach gigabytes, so none is read whole.

A line that does not parse is an error naming the file and line, except the last line of the
file: a writer that was stopped mid-line leaves a torn record there, which is skipped and
reported. Blank lines are ignored.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ....errors import BadInput
from ....guarded import InputProblem, iter_regular_lines, loads_json

# One record (a tool result holding a whole file, say) may be large; anything past this is not.
RECORD_SIZE_LIMIT = 64 << 20


def json_records(path: Path, notes: list[str]) -> Iterator[tuple[str, int, Any]]:
    """(where, line number, value) for each record of `path`; `notes` gets the torn tail."""
    torn: tuple[str, str] | None = None
    try:
        for number, raw, _ended in iter_regular_lines(path, line_limit=RECORD_SIZE_LIMIT):
            if not raw.strip():
                continue
            if torn is not None:
                raise BadInput(f"{torn[0]}: {torn[1]}")
            where = f"{path}:{number}"
            try:
                value = loads_json(raw.decode("utf-8"))
            except UnicodeDecodeError:
                torn = (where, "not UTF-8 text")
                continue
            except InputProblem as problem:
                torn = (where, str(problem).removeprefix("is "))
                continue
            yield where, number, value
    except FileNotFoundError:
        raise BadInput(f"no such file: {path}") from None
    except InputProblem as problem:
        raise BadInput(f"{path} {problem}") from None
    if torn is not None:
        notes.append(f"skipped an unfinished last line at {torn[0]}")


def input_files(paths: Sequence[Path], suffix: str, what: str, *, all_levels: bool) -> list[Path]:
    """Each path as given, or a folder's `*{suffix}` files in path order (`all_levels`: in
    its subfolders too); BadInput naming `what` for a path that is neither, or a folder
    holding none."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            listed = path.rglob("*") if all_levels else path.glob("*")
            found = sorted(p for p in listed if p.suffix == suffix)
            if not found:
                where = "under" if all_levels else "in"
                raise BadInput(f"no *{suffix} {what} file {where} {path}")
            files.extend(found)
        elif path.is_file():
            files.append(path)
        else:
            raise BadInput(f"no such {what} file or folder: {path}")
    return files
