"""The lanes' tool executor: read-only, and confined to one repository's root.

A lane's model names paths; this module decides whether to open them. A path is refused — and
the refusal is a tool result the model reads, never an exception — when it is absolute, climbs
out through `..`, or reaches outside the root through a symbolic link anywhere along the way.
The check happens before anything is opened: a refused path is never read. Files are opened
with O_NOFOLLOW after the check, so a link swapped in between still cannot be followed, and only
regular files are read (a named pipe in the repository would otherwise block the lane).

What an allowed call returns — its wording, its line slicing, its truncation — is exactly what
`lanes.tools.run_tool` returns, the function the corpus builds its turns with.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path, PurePosixPath

import msgspec

from .tools import LIST_DIR, READ_FILE, WorkingTree, normalize_path, path_problem, run_tool

# Far above anything a lane should read (results are cut at TOOL_RESULT_CHAR_CAP anyway); a
# cap keeps one huge file from filling the storm's memory before it is cut.
MAX_FILE_BYTES = 32 * 1024 * 1024
PATH_TOOLS = frozenset({READ_FILE, LIST_DIR})


class OutsideRoot(Exception):
    """A path that resolves outside the root. Not an OSError on purpose: `run_tool` turns
    those into "no such file", and this one must reach the executor to be worded a refusal."""


class ConfinedTree(WorkingTree):
    """A working tree whose reads cannot leave `root`, whatever links it holds.

    Links are never followed (a git tree has none to follow either): a path through a link
    that stays inside reads as "no such file", one that leads outside is refused.
    """

    def __init__(self, root: Path) -> None:
        self.real_root = Path(os.path.realpath(root))
        super().__init__(self.real_root)

    def inside(self, relative: str) -> bool:
        """Whether `relative`, with every link resolved, stays inside the root. Nothing is
        opened: only names are resolved."""
        pure = PurePosixPath(relative)
        if pure.is_absolute() or ".." in pure.parts:
            return False
        real = Path(os.path.realpath(self.real_root.joinpath(*pure.parts)))
        return real == self.real_root or self.real_root in real.parents

    def _through_link(self, relative: str) -> bool:
        current = self.real_root
        for part in PurePosixPath(relative).parts:
            if part == ".":
                continue
            current = current / part
            try:
                if stat.S_ISLNK(os.lstat(current).st_mode):
                    return True
            except OSError:
                return False  # missing: opening it will say so
        return False

    def read_bytes(self, path: str) -> bytes:
        if not self.inside(path):
            raise OutsideRoot(path)
        if self._through_link(path):
            raise FileNotFoundError(path)
        target = self.real_root / path
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK
        try:
            fd = os.open(target, flags)
        except OSError:
            raise FileNotFoundError(path) from None
        try:
            info = os.fstat(fd)
            if stat.S_ISDIR(info.st_mode):
                raise IsADirectoryError(path)
            if not stat.S_ISREG(info.st_mode):
                raise FileNotFoundError(path)
            if info.st_size > MAX_FILE_BYTES:
                raise FileTooLarge(path, info.st_size)
            with os.fdopen(os.dup(fd), "rb") as handle:
                return handle.read(MAX_FILE_BYTES + 1)
        finally:
            os.close(fd)


class FileTooLarge(Exception):
    """A file over MAX_FILE_BYTES (reaches the executor past `run_tool`, like OutsideRoot)."""

    def __init__(self, path: str, size: int) -> None:
        super().__init__(path)
        self.size = size


class ToolOutcome(msgspec.Struct, frozen=True):
    """One executed call. `refused` is True when the path was outside the root (never opened);
    `text` is what the model is sent."""

    name: str
    arguments: dict[str, object]
    text: str
    refused: bool = False

    @property
    def is_error(self) -> bool:
        return self.text.startswith("error:")


class ToolExecutor:
    """Runs the lanes' tools over one repository, read-only and root-confined."""

    def __init__(self, root: Path) -> None:
        if not root.is_dir():
            raise NotADirectoryError(str(root))
        self.tree = ConfinedTree(root)

    @property
    def root(self) -> Path:
        return self.tree.real_root

    def refusal(self, name: str, arguments: Mapping[str, object]) -> str | None:
        """The tool error for a path outside the root, or None when the path may be used."""
        if name not in PATH_TOOLS:
            return None
        path = arguments.get("path", "." if name == LIST_DIR else None)
        if not isinstance(path, str) or path_problem(path) is not None:
            return None  # run_tool words a missing, mistyped or impossible path itself
        relative = normalize_path(path)
        if relative is None or not self.tree.inside(relative):
            return f"error: {path!r} is outside the repository"
        return None

    def execute(self, name: str, arguments: Mapping[str, object]) -> ToolOutcome:
        args = dict(arguments)
        refused = self.refusal(name, args)
        if refused is not None:
            return ToolOutcome(name, args, refused, refused=True)
        try:
            text = run_tool(name, args, self.tree)
        except FileTooLarge as exc:
            text = f"error: {exc.args[0]} is too large to read ({exc.size:,} bytes)"
        except OutsideRoot as exc:  # a link swapped in after the check
            return ToolOutcome(
                name, args, f"error: {exc.args[0]!r} is outside the repository", refused=True
            )
        return ToolOutcome(name, args, text)
