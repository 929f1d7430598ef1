"""Ollama's version read from its binary, and a model's digest read from its model store,
spelled as a running Ollama says them on /api/version and /api/tags:

    ollama --version         "Warning: client version is 0.12.3"          -> "0.12.3"

`ollama --version` also asks a server for its version; it is pointed at the calibration port,
where nothing listens yet, so the answer is always the binary's own.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

OLLAMA_REGISTRY = "registry.ollama.ai"
OLLAMA_NAMESPACE = "library"
OLLAMA_TAG = "latest"

_OLLAMA_CLIENT = re.compile(r"client version is\s+(\S+)")
_OLLAMA_ANY = re.compile(r"version is\s+(\S+)")


def ollama_version(text: str) -> str | None:
    """The client's version in `ollama --version` output, as /api/version spells it."""
    match = _OLLAMA_CLIENT.search(text) or _OLLAMA_ANY.search(text)
    return match.group(1) if match else None


def ollama_manifest(models_dir: Path, model: str) -> Path:
    """Where Ollama keeps `model`'s manifest: manifests/<host>/<namespace>/<name>/<tag>."""
    name, _, tag = model.partition(":")
    parts = name.split("/")
    if len(parts) == 1:
        parts = [OLLAMA_REGISTRY, OLLAMA_NAMESPACE, *parts]
    elif len(parts) == 2:
        parts = [OLLAMA_REGISTRY, *parts]
    return models_dir.joinpath("manifests", *parts, tag or OLLAMA_TAG)


def manifest_digest(path: Path) -> str:
    """The digest /api/tags gives a model: the sha256 of its manifest file, in hex."""
    return hashlib.sha256(path.read_bytes()).hexdigest()
