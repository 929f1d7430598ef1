"""The fixtures every test directory may ask for (loaded by tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from vibey_gh.cli.main import cli
from vibey_gh.composition import real_collaborators
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


@pytest.fixture(autouse=True)
def plots_only_where_asked(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Drawing a report's PNG plots costs seconds of CPU for every calibration that ends: in
    this process, reports are written as the light install writes them (no matplotlib, a note
    saying how to get plots) unless the test is marked `plots`. The tests of the plots, the
    reports and `show` carry the mark; calibrations run as their own process draw as always."""
    if request.node.get_closest_marker("plots") is None:
        monkeypatch.setattr(
            "vibey_gh.slots.report.plotting.plots.plots_available", lambda find_module=None: False
        )


@pytest.fixture
def layout(isolated_state: Path) -> StateLayout:
    """The test's own state dir, as the library lays it out."""
    return StateLayout(isolated_state)


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
