"""The lanes' tools: their definitions, what they return, and how results are cut.

A lane may call two tools, both read-only:

- `read_file(path, offset?, limit?)`: the file's text; `offset` is the first line (from 1) and
  `limit` the most lines to return.
- `list_dir(path)`: the folder's entries, one a line, folders ending in `/`.

Every tool result goes through `truncate_tool_result`: at most `TOOL_RESULT_CHAR_CAP`
characters are kept, followed by a marker that says how many were cut. The corpus builds its
turns with these same functions over the same trees, so a replayed turn holds exactly what a
lane would have been sent. Errors (no such file, a binary file, a bad argument) are results
too, starting with "error:" — a lane reports them to the model, it does not crash.
"""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any, Protocol

from ..errors import BadInput
from ..guarded import InputProblem, NotJson, loads_json

# Enough for a whole source file of a few hundred lines (about 4,000 tokens by the
# characters ÷ 3 estimate); longer files are cut rather than allowed to fill a lane's window.
TOOL_RESULT_CHAR_CAP = 12_000
TRUNCATION_MARKER = "\n[truncated: {cut:,} of {total:,} characters not shown]"
BINARY_SNIFF_BYTES = 8192
SKIPPED_FOLDERS = frozenset({".git", "__pycache__"})
MAX_PATH_CHARS = 4096  # PATH_MAX on Linux; macOS's is shorter
# A working tree is listed whole before its globs are matched: these caps keep a repository
# named by mistake (a home folder, `/`-like mounts, a generated tree) from walking for hours.
# The glob budget (lanes.globs) is sized for about 100,000 files.
MAX_TREE_ENTRIES = 200_000  # files and folders listed
MAX_TREE_DEPTH = 64  # folders below the root

READ_FILE = "read_file"
LIST_DIR = "list_dir"

_TOOL_DEFINITIONS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": READ_FILE,
            "description": (
                "Read a text file of the repository. Long results are cut at "
                f"{TOOL_RESULT_CHAR_CAP:,} characters; use offset and limit to read a part."
            ),
            "parameters": {
                "type": "object",
                "properties": {
                    "path": {
                        "type": "string",
                        "description": "Path relative to the repository root.",
                    },
                    "offset": {
                        "type": "integer",
                        "description": "First line to return, counting from 1 (default 1).",
                    },
                    "limit": {
                        "type": "integer",
                        "description": "Most lines to return (default: to the end).",
                    },
                },
                "required": ["path"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": LIST_DIR,
            "description": "List a folder of the repository; folders end with '/'.",
            "parameters": {
                "type": "object",
                "properties": {
                    "path": {
                        "type": "string",
                        "description": "Folder relative to the repository root ('.' is the root).",
                    },
                },
                "required": ["path"],
            },
        },
    },
]


class SourceTree(Protocol):
    """The files a lane reads: a working tree, or a repository at a commit."""

    def list_files(self) -> Sequence[str]:
        """Every file, as a relative POSIX path, sorted."""
        ...

    def read_bytes(self, path: str) -> bytes:
        """The file's bytes; FileNotFoundError when absent, IsADirectoryError for a folder."""
        ...


class TreeTooLarge(BadInput):
    """A working tree past MAX_TREE_ENTRIES or MAX_TREE_DEPTH: nothing of it is listed."""


def capped_walk(
    root: Path,
    *,
    max_entries: int = MAX_TREE_ENTRIES,
    max_depth: int = MAX_TREE_DEPTH,
    skipped: frozenset[str] = SKIPPED_FOLDERS,
    advice: str,
) -> Iterator[tuple[str, Path, list[str]]]:
    """(folder, its path relative to `root`, its file and link names) for every folder under
    `root`, links not followed and `skipped` folders left out; TreeTooLarge, naming a smaller
    or shallower folder as `advice`, past `max_entries` files and folders or below `max_depth`
    folders. The refusal comes mid-walk: a caller keeps nothing of a walk that raised, as a
    listing cut short would depend on where it stopped."""
    entries = 0
    for folder, subfolders, names in os.walk(root):
        subfolders[:] = [d for d in subfolders if d not in skipped]
        relative = Path(folder).relative_to(root)
        entries += len(subfolders) + len(names)
        if entries > max_entries:
            raise TreeTooLarge(
                f"{root} holds more than {max_entries:,} files and folders "
                f"(stopped listing in {relative.as_posix()}): name a smaller folder as {advice}"
            )
        if subfolders and len(relative.parts) >= max_depth:
            raise TreeTooLarge(
                too_deep(root, (relative / subfolders[0]).as_posix(), max_depth, advice)
            )
        yield folder, relative, names


def too_deep(root: Path, deep: str, max_depth: int, advice: str) -> str:
    """The refusal of a tree with folders below `max_depth`, naming the first one seen."""
    return (
        f"{root} has folders more than {max_depth} levels deep "
        f"({deep[:120]}{'…' if len(deep) > 120 else ''}): name a shallower folder as {advice}"
    )


class WorkingTree:
    """Files on disk under `root`. Symbolic links are not followed (a git tree has none to
    follow either), and `.git` and `__pycache__` folders are skipped.

    The walk stops with TreeTooLarge past `max_entries` files and folders or below
    `max_depth` folders: a partial listing would make a corpus depend on where it stopped."""

    def __init__(
        self, root: Path, *, max_entries: int = MAX_TREE_ENTRIES, max_depth: int = MAX_TREE_DEPTH
    ) -> None:
        self.root = root
        self.max_entries = max_entries
        self.max_depth = max_depth
        self._files: list[str] | None = None

    def list_files(self) -> Sequence[str]:
        if self._files is None:
            self._files = sorted(self._walk())
        return self._files

    def _walk(self) -> list[str]:
        found: list[str] = []
        walk = capped_walk(
            self.root,
            max_entries=self.max_entries,
            max_depth=self.max_depth,
            advice="the spec's repository",
        )
        for folder, relative, names in walk:
            for name in names:
                full = Path(folder, name)
                if not full.is_symlink() and full.is_file():
                    found.append((relative / name).as_posix())
        return found

    def read_bytes(self, path: str) -> bytes:
        full = self.root / path
        # A link, or a path through a linked folder, could lead outside the repository.
        if full.is_symlink() or not full.resolve().is_relative_to(self.root.resolve()):
            raise FileNotFoundError(path)
        if full.is_dir():
            raise IsADirectoryError(path)
        if not full.is_file():  # a named pipe or device would block or never end
            raise FileNotFoundError(path)
        return full.read_bytes()


def tool_definitions() -> list[dict[str, Any]]:
    """The tools in OpenAI format (a fresh copy: callers may not change the shared one)."""
    return copy.deepcopy(_TOOL_DEFINITIONS)


def truncate_tool_result(text: str, cap: int = TOOL_RESULT_CHAR_CAP) -> str:
    """Keep the first `cap` characters and say how many were cut; shorter text is unchanged."""
    if len(text) <= cap:
        return text
    return text[:cap] + TRUNCATION_MARKER.format(cut=len(text) - cap, total=len(text))


def path_problem(path: str) -> str | None:
    """The tool error for a path no file can have, or None: a NUL character, a character the
    file system cannot encode (a lone surrogate), or more than MAX_PATH_CHARS characters. The
    operating system would raise ValueError or UnicodeEncodeError for these, not "no such
    file"."""
    shown = repr(path[:80]) + ("…" if len(path) > 80 else "")
    if "\x00" in path:
        return f"error: the path {shown} holds a NUL character, which no file name can"
    if len(path) > MAX_PATH_CHARS:
        return f"error: the path {shown} is longer than {MAX_PATH_CHARS} characters"
    try:
        os.fsencode(path)
    except UnicodeError:
        return f"error: the path {shown} is not a valid file name"
    return None


def run_tool(name: str, arguments: Mapping[str, Any] | str, tree: SourceTree) -> str:
    """Run one tool call against `tree` and return the (truncated) result text.

    `arguments` is the JSON string of the OpenAI format or an already decoded object.
    """
    args = _decode_arguments(arguments)
    if isinstance(args, str):
        return args
    if name == READ_FILE:
        path, offset, limit = args.get("path"), args.get("offset"), args.get("limit")
        if not isinstance(path, str):
            return "error: read_file needs a 'path' string"
        problem = path_problem(path)
        if problem is not None:
            return problem
        for label, value in (("offset", offset), ("limit", limit)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
                return f"error: read_file '{label}' must be a whole number"
        return read_file(tree, path, offset, limit)
    if name == LIST_DIR:
        path = args.get("path", ".")
        if not isinstance(path, str):
            return "error: list_dir needs a 'path' string"
        return path_problem(path) or list_dir(tree, path)
    return f"error: no tool named {name!r} (the tools are {READ_FILE} and {LIST_DIR})"


def read_file(
    tree: SourceTree, path: str, offset: int | None = None, limit: int | None = None
) -> str:
    """What `read_file` returns for `path` (lines `offset`.. of at most `limit`), truncated."""
    relative = normalize_path(path)
    if relative is None:
        return f"error: {path!r} is outside the repository"
    try:
        data = tree.read_bytes(relative)
    except IsADirectoryError:
        return f"error: {relative} is a folder; use {LIST_DIR}"
    except (FileNotFoundError, NotADirectoryError):
        return f"error: no such file: {relative}"
    if b"\x00" in data[:BINARY_SNIFF_BYTES]:
        return f"error: {relative} is a binary file ({len(data):,} bytes)"
    text = data.decode("utf-8", errors="replace")
    if offset is not None or limit is not None:
        lines = text.splitlines(keepends=True)
        first = max(offset or 1, 1)
        if first > len(lines) and lines:
            return f"error: {relative} has {len(lines)} lines; offset {first} is past the end"
        stop = None if limit is None else first - 1 + max(limit, 0)
        text = "".join(lines[first - 1 : stop])
    if not text:
        return "(empty)"
    return truncate_tool_result(text)


def list_dir(tree: SourceTree, path: str) -> str:
    """What `list_dir` returns for `path`, truncated."""
    relative = normalize_path(path)
    if relative is None:
        return f"error: {path!r} is outside the repository"
    prefix = "" if relative == "." else relative + "/"
    entries: dict[str, None] = {}
    try:
        listing = tree.list_files()
    except TreeTooLarge as exc:
        return f"error: the repository cannot be listed: {exc}"
    for file in listing:
        if file.startswith(prefix):
            head, sep, _ = file[len(prefix) :].partition("/")
            entries.setdefault(head + ("/" if sep else ""), None)
    if not entries:
        if relative in set(listing):
            return f"error: {relative} is a file; use {READ_FILE}"
        return f"error: no such folder: {relative}"
    return truncate_tool_result("\n".join(sorted(entries)))


def normalize_path(path: str) -> str | None:
    """A repository-relative POSIX path ('.' for the root), or None when it leaves the
    repository (absolute, or climbing out through '..')."""
    pure = PurePosixPath(path.strip() or ".")
    if pure.is_absolute():
        return None
    parts: list[str] = []
    for part in pure.parts:
        if part == "..":
            if not parts:
                return None
            parts.pop()
        elif part != ".":
            parts.append(part)
    return "/".join(parts) or "."


def tool_call_message(call_id: str, name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
    """An assistant message that makes one tool call, in OpenAI format."""
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False)},
            }
        ],
    }


def tool_result_message(call_id: str, name: str, content: str) -> dict[str, Any]:
    """The `tool` message that answers one call, in OpenAI format."""
    return {"role": "tool", "tool_call_id": call_id, "name": name, "content": content}


def _decode_arguments(arguments: Mapping[str, Any] | str) -> dict[str, Any] | str:
    if isinstance(arguments, str):
        try:
            decoded = loads_json(arguments) if arguments.strip() else {}
        except NotJson:
            return "error: the tool arguments are not valid JSON"
        except InputProblem as problem:  # nested too deep, non-finite numbers
            return f"error: the tool arguments cannot be used: the JSON {problem}"
        arguments = decoded
    if not isinstance(arguments, Mapping):
        return "error: the tool arguments must be a JSON object"
    return dict(arguments)
