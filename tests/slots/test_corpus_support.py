"""Helpers for the corpus tests (no tests here): real git repositories and small pools."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

from vibey_gh.slots.corpus.pool import PoolRun
from vibey_gh.slots.corpus.turns import Turn

# Fixed identities and dates make commit hashes, and so corpus hashes, the same everywhere.
GIT_ENV = {
    "GIT_AUTHOR_NAME": "Corpus Test",
    "GIT_AUTHOR_EMAIL": "corpus@example.invalid",
    "GIT_COMMITTER_NAME": "Corpus Test",
    "GIT_COMMITTER_EMAIL": "corpus@example.invalid",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00+0000",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00+0000",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *args],
        env={**os.environ, **GIT_ENV},
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout.strip()


def write_files(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def make_repo(root: Path, files: dict[str, str]) -> str:
    """A git repository at `root` with `files` committed; returns the commit sha."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    return commit_all(root, files, "first")


def commit_all(root: Path, files: dict[str, str], message: str) -> str:
    write_files(root, files)
    git(root, "add", "-A")
    git(root, "commit", "-q", "--no-gpg-sign", "-m", message)
    return git(root, "rev-parse", "HEAD")


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
