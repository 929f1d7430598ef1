"""The standard-library names each module of src/ uses, read from its syntax tree.

`uses_in(path)` lists every module imported (`import fcntl` → "fcntl"), every attribute taken
from an imported module, however it was imported or renamed (`os.fsync`, `from os import
fsync`, `import os as o; o.fsync` → "os.fsync", also `getattr(os, "fsync")`), and every keyword
argument (`start_new_session=` → "start_new_session="), each with its line.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import vibey_gh

PACKAGE = Path(vibey_gh.__file__).resolve().parent
PLATFORMS = PACKAGE / "platforms"


@dataclass(frozen=True)
class Use:
    path: Path
    line: int
    name: str

    def where(self) -> str:
        return f"{self.path.relative_to(PACKAGE.parent.parent)}:{self.line}: {self.name}"


def _imported_names(tree: ast.AST) -> dict[str, str]:
    """Local name → the dotted name it stands for, from every import in the module."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    names[alias.asname] = alias.name
                else:
                    top = alias.name.split(".")[0]
                    names[top] = top
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for alias in node.names:
                names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return names


def _dotted(node: ast.expr, names: dict[str, str]) -> str | None:
    if isinstance(node, ast.Name):
        return names.get(node.id)
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value, names)
        return f"{base}.{node.attr}" if base else None
    return None


def uses_in_source(source: str, path: Path) -> Iterator[Use]:
    tree = ast.parse(source, filename=str(path))
    names = _imported_names(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Use(path, node.lineno, alias.name)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield Use(path, node.lineno, node.module)
            for alias in node.names:
                yield Use(path, node.lineno, f"{node.module}.{alias.name}")
        elif isinstance(node, ast.Attribute):
            dotted = _dotted(node, names)
            if dotted:
                yield Use(path, node.lineno, dotted)
        elif isinstance(node, ast.Call):
            for keyword in node.keywords:
                if keyword.arg:
                    yield Use(path, node.lineno, f"{keyword.arg}=")
            is_lookup = isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr")
            if is_lookup and len(node.args) >= 2:
                owner, attribute = node.args[0], node.args[1]
                base = _dotted(owner, names)
                literal = isinstance(attribute, ast.Constant) and isinstance(attribute.value, str)
                if base and literal:
                    yield Use(path, node.lineno, f"{base}.{attribute.value}")


def uses_in(path: Path) -> list[Use]:
    return list(uses_in_source(path.read_text(encoding="utf-8"), path))


def source_files(*, outside_platforms: bool) -> list[Path]:
    return sorted(
        path
        for path in PACKAGE.rglob("*.py")
        if not (outside_platforms and PLATFORMS in path.parents)
    )
