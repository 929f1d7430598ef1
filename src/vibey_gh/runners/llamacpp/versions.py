"""Runner versions that can be read without starting or importing the runner.

Kept apart from the adapters so that identifying production (on every `slots allowed`) imports
nothing but package metadata.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...errors import RunnerNotFound
from .models import installed_version

if TYPE_CHECKING:
    from collections.abc import Callable

EMBEDDED_PACKAGE = "xllamacpp"


def embedded_version() -> str | None:
    """ "xllamacpp <version>" from the installed distribution, without importing llama.cpp."""
    version = installed_version(EMBEDDED_PACKAGE)
    return f"{EMBEDDED_PACKAGE} {version}" if version else None


EMBEDDED_EXTRA_HINT = "pip install 'vibey-gh[embedded]' (or pipx inject vibey-gh xllamacpp)"


def require_embedded(version_of: Callable[[str], str | None] = installed_version) -> None:
    """Refuse, saying how to install it, when the embedded runner's package is missing (the
    light install leaves it out)."""
    if version_of(EMBEDDED_PACKAGE) is None:
        raise RunnerNotFound(
            f"the embedded runner needs the {EMBEDDED_PACKAGE} package, which this install "
            f"leaves out: {EMBEDDED_EXTRA_HINT}"
        )
