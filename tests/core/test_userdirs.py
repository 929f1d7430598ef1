"""Where config and state live by default, on each platform."""

from __future__ import annotations

from pathlib import Path

import pytest

from vibey_gh.config import find_config
from vibey_gh.state import state_root
from vibey_gh.userdirs import user_config_dir, user_state_dir

HOME = {"HOME": "/home/ada"}


@pytest.mark.parametrize(
    ("platform", "environ", "config", "state"),
    [
        ("linux", HOME, "/home/ada/.config/vibey-gh", "/home/ada/.local/state/vibey-gh"),
        (
            "linux",
            {**HOME, "XDG_CONFIG_HOME": "/xdg/config", "XDG_STATE_HOME": "/xdg/state"},
            "/xdg/config/vibey-gh",
            "/xdg/state/vibey-gh",
        ),
        (
            "linux",
            {**HOME, "XDG_CONFIG_HOME": "  ", "XDG_STATE_HOME": ""},
            "/home/ada/.config/vibey-gh",
            "/home/ada/.local/state/vibey-gh",
        ),
        (
            "darwin",
            HOME,
            "/home/ada/Library/Application Support/vibey-gh",
            "/home/ada/Library/Application Support/vibey-gh",
        ),
        ("darwin", {**HOME, "XDG_STATE_HOME": "/xdg/state"}, None, "/xdg/state/vibey-gh"),
        ("freebsd14", HOME, "/home/ada/.config/vibey-gh", "/home/ada/.local/state/vibey-gh"),
    ],
)
def test_each_platform_s_directories(
    platform: str, environ: dict[str, str], config: str | None, state: str
) -> None:
    if config is not None:
        assert user_config_dir(environ, platform) == Path(config)
    assert user_state_dir(environ, platform) == Path(state)


def test_linux_directories_are_where_platformdirs_puts_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    platformdirs = pytest.importorskip("platformdirs")
    for variable in ("XDG_CONFIG_HOME", "XDG_STATE_HOME"):
        monkeypatch.delenv(variable, raising=False)
    assert user_config_dir(platform="linux") == Path(
        platformdirs.user_config_dir("vibey-gh", appauthor=False)
    )
    assert user_state_dir(platform="linux") == Path(
        platformdirs.user_state_dir("vibey-gh", appauthor=False)
    )


def test_the_user_config_is_found_and_the_state_root_follows_xdg(tmp_path: Path) -> None:
    environ = {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "config")}
    config = tmp_path / "config" / "vibey-gh" / "vibey-gh.toml"
    config.parent.mkdir(parents=True)
    config.write_text("[local_models]\n")
    assert find_config(cwd=tmp_path, environ=environ) == config
    assert state_root({"HOME": "/home/ada"}) == Path("/home/ada/.local/state/vibey-gh/slots")
