"""Real git repositories for the tests, with fixed identities and dates."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

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
