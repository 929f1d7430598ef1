"""Reading files and text that anyone could have put there, without hanging or a traceback.

Every file the tool reads back (evidence, checkpoints, requests, figures, corpus, transcripts,
config, specs) goes through here:

* only a regular file is read: a FIFO would block the reader forever and `/dev/zero` would
  fill memory, so the file is opened with O_NONBLOCK (opening a FIFO then never waits for a
  writer), checked with fstat, and refused when it is anything else;
* at most `limit` bytes are read, whatever the file's size says;
* nesting deeper than MAX_DEPTH levels is refused before the parser recurses into it (Python's
  JSON reader recurses once per level), by a scan whose time grows with the text's length and
  nothing else: a reply of quotes and backslashes cannot make it backtrack;
* NaN and ±Infinity (which Python's JSON reader accepts, and 1e400 becomes) are refused.

The same reader serves runner replies (`loads_json_bytes`, `gather_capped` for a body read in
chunks): one size cap, one nesting cap, one error type. Problems are raised as `InputProblem`,
whose message reads after the file's name ("is a FIFO, not a regular file"); callers turn it
into their own error type. `NotJson`, one kind of it, is text that is no JSON at all, which a
runner may answer (an error page) and a caller may keep as text.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
from collections.abc import Iterable, Iterator
from itertools import accumulate
from pathlib import Path
from typing import Any

MIB = 1 << 20
MAX_DEPTH = 64
DEFAULT_LIMIT = 64 * MIB
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
# A JSON string, escapes included, removed before brackets are counted. Its closing quote is
# optional, so a match never fails once started: an unclosed string ends the text instead of
# being tried again from every quote inside it (which took seconds for 40 KB of `\"`).
_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
# Each bracket's step in depth, indexed by its byte: the running sum is taken in C.
_DEPTH_STEP = tuple(1 if byte in b"[{" else -1 if byte in b"]}" else 0 for byte in range(256))


class InputProblem(ValueError):
    """What is wrong with a file or text, phrased to follow its name."""


class NotJson(InputProblem):
    """The text is not JSON at all (as opposed to JSON refused for its depth or numbers)."""


def kind_of(mode: int) -> str:
    """What a file of this st_mode is, for a message (\"a FIFO\", \"a folder\", …)."""
    for test, name in (
        (stat.S_ISREG, "a regular file"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISDIR, "a folder"),
    ):
        if test(mode):
            return name
    return "not a plain file"


def _refuse_special(path: Path) -> None:
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return
    if not stat.S_ISREG(mode):
        raise InputProblem(f"is {kind_of(mode)}, not a regular file")


def read_regular_bytes(path: Path, *, limit: int = DEFAULT_LIMIT) -> bytes:
    """The bytes of `path` if it is a regular file of at most `limit` bytes.

    FileNotFoundError passes through (callers often treat a missing file on its own)."""
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except FileNotFoundError:
        raise
    except OSError as exc:
        _refuse_special(path)  # a socket cannot even be opened: name what it is
        raise InputProblem(f"cannot be read ({exc.strerror or exc})") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise InputProblem(f"is {kind_of(mode)}, not a regular file")
        chunks: list[bytes] = []
        size = 0
        while True:
            chunk = os.read(fd, min(MIB, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:
                raise InputProblem(f"is larger than {limit // MIB or 1} MiB, the most read")
        return b"".join(chunks)
    except OSError as exc:
        raise InputProblem(f"cannot be read ({exc.strerror or exc})") from None
    finally:
        os.close(fd)


def iter_regular_lines(
    path: Path, *, line_limit: int = DEFAULT_LIMIT
) -> Iterator[tuple[int, bytes, bool]]:
    """The lines of the regular file `path`, one at a time, never the whole file in memory:
    (line number from 1, the line's bytes without its newline, whether a newline ended it).

    A line longer than `line_limit` bytes is refused (a log of any size streams; one record
    that would not fit in memory does not). FileNotFoundError passes through."""
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except FileNotFoundError:
        raise
    except OSError as exc:
        _refuse_special(path)
        raise InputProblem(f"cannot be read ({exc.strerror or exc})") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise InputProblem(f"is {kind_of(mode)}, not a regular file")
        number = 0
        pending = bytearray()
        while chunk := os.read(fd, MIB):
            pending += chunk
            start = 0
            while (end := pending.find(b"\n", start)) >= 0:
                number += 1
                yield number, bytes(pending[start:end]), True
                start = end + 1
            del pending[:start]
            if len(pending) > line_limit:
                raise InputProblem(
                    f"has a line {number + 1} longer than {line_limit // MIB or 1} MiB"
                )
        if pending:
            yield number + 1, bytes(pending), False
    except OSError as exc:
        raise InputProblem(f"cannot be read ({exc.strerror or exc})") from None
    finally:
        os.close(fd)


def read_regular_text(path: Path, *, limit: int = DEFAULT_LIMIT) -> str:
    try:
        return read_regular_bytes(path, limit=limit).decode("utf-8")
    except UnicodeDecodeError:
        raise InputProblem("is not UTF-8 text") from None


def json_depth(text: str) -> int:
    """The deepest nesting of arrays and objects in JSON `text` (strings ignored)."""
    brackets = _NOT_BRACKET.sub("", _JSON_STRING.sub("", text)).encode("ascii")
    return max(accumulate(map(_DEPTH_STEP.__getitem__, brackets), initial=0))


def _refuse_constant(name: str) -> Any:
    raise InputProblem(f"holds the non-finite number {name}")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise InputProblem(f"holds the number {text[:40]}, too large to be finite")
    return value


def loads_json(text: str, *, max_depth: int = MAX_DEPTH) -> Any:
    """json.loads, refusing nesting beyond `max_depth` and non-finite numbers."""
    if ("[" in text or "{" in text) and json_depth(text) > max_depth:
        raise InputProblem(f"is nested more than {max_depth} levels deep")
    try:
        return json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float)
    except json.JSONDecodeError as exc:
        raise NotJson(f"is not valid JSON (line {exc.lineno}: {exc.msg})") from None
    except RecursionError:
        raise InputProblem(f"is nested more than {max_depth} levels deep") from None
    except InputProblem:
        raise
    except ValueError as exc:  # an integer with more digits than Python converts
        raise InputProblem(f"is not usable JSON ({str(exc)[:80]})") from None


def loads_json_bytes(raw: bytes, *, max_depth: int = MAX_DEPTH) -> Any:
    """Bytes (a reply, a request) as JSON (`loads_json`); bytes that are no UTF-8 are `NotJson`."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise NotJson("is not UTF-8 text") from None
    return loads_json(text, max_depth=max_depth)


def gather_capped(chunks: Iterable[bytes], limit: int) -> bytes:
    """The chunks joined, refused as soon as they pass `limit` bytes: a reply of any length
    costs at most `limit` bytes of memory."""
    gathered = bytearray()
    for chunk in chunks:
        gathered += chunk
        if len(gathered) > limit:
            raise InputProblem(f"is larger than {size_text(limit)}, the most read")
    return bytes(gathered)


def size_text(limit: int) -> str:
    return f"{limit // MIB} MiB" if limit >= MIB else f"{limit} bytes"


def nesting_depth(value: object) -> int:
    """The deepest nesting of lists and dicts in an already parsed value (no recursion)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, depth + 1)
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
    return deepest


def loads_toml(text: str, *, max_depth: int = MAX_DEPTH) -> dict[str, object]:
    """tomllib.loads, refusing nesting beyond `max_depth`. TOMLDecodeError passes through."""
    import tomllib  # lazy: 10 ms the gate's JSON readers never need (its config is cached)

    try:
        data = tomllib.loads(text)
    except RecursionError:
        raise InputProblem(f"is nested more than {max_depth} levels deep") from None
    if nesting_depth(data) > max_depth:
        raise InputProblem(f"is nested more than {max_depth} levels deep")
    return data
