"""Helpers for the corpus tests (no tests here): specs and small pools."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vibey_gh.slots.corpus.pool import PoolRun
from vibey_gh.slots.corpus.turns import Turn


def write_spec(
    folder: Path,
    spec_id: str,
    files: list[str],
    repository: Path | str,
    commit: str | None = None,
    extra: str = "",
) -> Path:
    lines = [
        f'id = "{spec_id}"',
        f'title = "Read {spec_id}"',
        f'task = "Explain what {spec_id} does."',
        f'repository = "{repository}"',
        "files = [" + ", ".join(f'"{name}"' for name in files) + "]",
    ]
    if commit is not None:
        lines.append(f'commit = "{commit}"')
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{spec_id}.toml"
    path.write_text("\n".join(lines) + "\n" + extra, encoding="utf-8")
    return path


def synthetic_run(run_id: str, depths: list[int]) -> PoolRun:
    """A run whose turns have the given depth estimates (messages are placeholders)."""
    turns = []
    for index, depth in enumerate(depths):
        messages: list[dict[str, Any]] = [{"role": "user", "content": f"{run_id} turn {index}"}]
        turns.append(Turn(f"{run_id}#{index}", run_id, index, messages, [], depth))
    return PoolRun(run_id, "transcript", tuple(turns))


SOURCE_FILES = {
    "README.md": "# demo\n",
    "pkg/__init__.py": '"""demo package"""\n',
    "pkg/small.py": "def small():\n    return 1\n",
    "pkg/medium.py": "".join(f"def f{i}():\n    return {i}\n" for i in range(120)),
    "pkg/sub/deep.py": "X = 1\n",
    "data/big.txt": "".join(f"line {i:05d} of a long file\n" for i in range(800)),
}
