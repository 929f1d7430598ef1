"""Which OS this is, whether the tool runs on it, and where its users' files go.

Kept apart from `probes` and free of imports: `slots allowed` and the config lookup ask on
every call, and the probes' modules are not needed for that.
"""

from __future__ import annotations

import sys

from ..errors import UnsupportedPlatform

SUPPORTED_PLATFORMS = {"darwin": "macOS", "linux": "Linux"}
MACOS_USER_DIR = "Library/Application Support"


def platform_family(platform: str) -> str:
    """ "linux", "darwin", or the platform string itself for anything else."""
    if platform.startswith("linux"):
        return "linux"
    return platform


def this_platform() -> str:
    """ "linux", "darwin", or this machine's platform string for anything else."""
    return platform_family(sys.platform)


def unsupported_platform_reason(platform: str | None = None) -> str | None:
    """None on macOS and Linux; elsewhere, one line naming the platforms the tool runs on."""
    family = this_platform() if platform is None else platform_family(platform)
    if family in SUPPORTED_PLATFORMS:
        return None
    names = " and ".join(SUPPORTED_PLATFORMS.values())
    return f"unsupported platform: {family}; vibey-gh runs on {names}"


def require_supported_platform(platform: str | None = None) -> None:
    """Raise UnsupportedPlatform (exit 1) unless `platform` (default: this one) is supported."""
    reason = unsupported_platform_reason(platform)
    if reason is not None:
        raise UnsupportedPlatform(reason)


def user_dir_under_home(xdg_default: str, platform: str | None = None) -> str:
    """Where per-user files live under the home folder when no XDG variable says:
    `Library/Application Support` on macOS, `xdg_default` (`.config`, …) everywhere else."""
    family = this_platform() if platform is None else platform_family(platform)
    return MACOS_USER_DIR if family == "darwin" else xdg_default
