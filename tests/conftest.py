"""Shared fixtures. Every test runs with its own state dir and no user config."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def isolated_state(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    """Point the state dir and config lookup away from the user's real files."""
    root = tmp_path_factory.mktemp("state")
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("VIBEY_GH_SLOTS_DIR", str(root))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / "state"))
    # set first so that monkeypatch restores it: `--config FILE` sets it in this process
    monkeypatch.setenv("VIBEY_GH_CONFIG", "")
    monkeypatch.delenv("VIBEY_GH_CONFIG")
    monkeypatch.chdir(tmp_path_factory.mktemp("cwd"))
    yield root
