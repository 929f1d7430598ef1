"""Where the runner kinds' names appear in the package's code, read with `ast`.

A kind's name is an identifier when a string constant in code is exactly that name: compared
with, used as a dict key, passed, assigned or defaulted. Those belong to the kind's own folder
and the registry, the one place a name maps to its kind. Text that merely mentions a kind
inside a longer string (a help line, an error message, "ollama pull MODEL") is not a name used
as an identifier, and docstrings are prose: neither is counted.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class NameUse:
    """One string constant in code that is exactly a kind's name."""

    file: Path
    line: int
    name: str

    def where(self) -> str:
        return f"{self.file}:{self.line}: {self.name!r}"


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the constants that are docstrings (prose, not code)."""
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def name_uses(source: str, path: Path, names: frozenset[str]) -> Iterator[NameUse]:
    """Every string constant of `source` that is exactly one of `names`, docstrings left out."""
    tree = ast.parse(source, filename=str(path))
    prose = _docstrings(tree)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and node.value in names
            and id(node) not in prose
        ):
            yield NameUse(path, node.lineno, node.value)


def misplaced_names(
    package: Path, homes: Mapping[str, tuple[Path, ...]], registry: Path
) -> list[NameUse]:
    """Uses of a kind's name outside its home folders and the registry. `homes`: each kind's
    name -> the folders allowed to spell it (its own folder)."""
    names = frozenset(homes)
    found = []
    for path in sorted(package.rglob("*.py")):
        if path == registry:
            continue
        for use in name_uses(path.read_text(encoding="utf-8"), path, names):
            if not any(path.is_relative_to(home) for home in homes[use.name]):
                found.append(use)
    return found
