"""Runner versions that can be read without starting or importing the runner.

Kept apart from the adapters so that identifying production (on every `slots allowed`) imports
nothing but package metadata.
"""

from __future__ import annotations

from .models import installed_version

EMBEDDED_PACKAGE = "xllamacpp"


def embedded_version() -> str | None:
    """ "xllamacpp <version>" from the installed distribution, without importing llama.cpp."""
    version = installed_version(EMBEDDED_PACKAGE)
    return f"{EMBEDDED_PACKAGE} {version}" if version else None
