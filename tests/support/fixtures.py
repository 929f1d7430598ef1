"""The fixtures every test directory may ask for (loaded by tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from vibey_gh.state import StateLayout


@pytest.fixture(autouse=True)
def isolated_state(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    """Every test runs with its own state dir and no user config: point the state dir and
    the config lookup away from the user's real files, and run in an empty folder."""
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


@pytest.fixture
def layout(isolated_state: Path) -> StateLayout:
    """The test's own state dir, as the library lays it out."""
    return StateLayout(isolated_state)
