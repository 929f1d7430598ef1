"""Where a user's config and state live when no environment variable of ours says.

The XDG base directories wherever they are set; otherwise `~/Library/Application Support` on
macOS, and `~/.config` and `~/.local/state` everywhere else — where platformdirs puts them.
Two small functions instead of platformdirs because importing it costs about 7 ms, and
`slots allowed` looks both up on every call.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from .platforms.support import user_dir_under_home

APP_NAME = "vibey-gh"


def user_config_dir(environ: Mapping[str, str] | None = None, platform: str | None = None) -> Path:
    """`$XDG_CONFIG_HOME/vibey-gh`, else the platform's (`~/.config/vibey-gh` on Linux)."""
    return _base("XDG_CONFIG_HOME", ".config", environ, platform) / APP_NAME


def user_state_dir(environ: Mapping[str, str] | None = None, platform: str | None = None) -> Path:
    """`$XDG_STATE_HOME/vibey-gh`, else the platform's (`~/.local/state/vibey-gh` on Linux)."""
    return _base("XDG_STATE_HOME", ".local/state", environ, platform) / APP_NAME


def _base(
    variable: str, home_relative: str, environ: Mapping[str, str] | None, platform: str | None
) -> Path:
    env = os.environ if environ is None else environ
    explicit = env.get(variable, "").strip()
    if explicit:
        return Path(explicit).expanduser()

    home = Path(env["HOME"]) if env.get("HOME") else Path.home()
    return home / user_dir_under_home(home_relative, platform)
