"""Shared fixtures. Every test runs with its own state dir and no user config; `run_cli` runs the
CLI with stand-in collaborators."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from vibey_gh.cli.main import cli
from vibey_gh.composition import real_collaborators


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


RunCli = Callable[..., Result]


@pytest.fixture
def run_cli() -> RunCli:
    """Run `vibey-gh` in this process with some collaborators replaced and the rest real.

    `run_cli(["doctor", "--json"], probes=lambda: probes, identify_production=identify)`:
    the keywords are those of `vibey_gh.composition.real_collaborators` (platform, clock,
    layout, probes, device, identify_production, production_drift, decide_allowed,
    calibration_environment, production_client), and a part left out is built from those given,
    as in production. The CLI takes them from click's `obj`, the override point its root group
    documents; this fixture is the one way the suite uses it.
    """

    def run(args: list[str], **parts: Any) -> Result:
        return CliRunner().invoke(cli, args, obj=real_collaborators(**parts))

    return run
