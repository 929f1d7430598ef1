from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from vibey_gh.errors import RunnerNotFound
from vibey_gh.runners import digest as digest_module
from vibey_gh.runners.digest import CACHE_NAME, gguf_digest
from vibey_gh.state import StateLayout


@pytest.fixture
def model(tmp_path: Path) -> Path:
    path = tmp_path / "models" / "tiny.gguf"
    path.parent.mkdir()
    path.write_bytes(b"GGUF" + bytes(range(256)) * 50)
    return path


def test_digest_is_the_files_sha256(model: Path, layout: StateLayout) -> None:
    assert gguf_digest(model, layout) == hashlib.sha256(model.read_bytes()).hexdigest()


def test_cache_is_private_json_keyed_by_resolved_path(model: Path, layout: StateLayout) -> None:
    gguf_digest(model, layout)
    cache = layout.cache / CACHE_NAME
    assert cache.stat().st_mode & 0o777 == 0o600
    entries = json.loads(cache.read_text())["entries"]
    assert list(entries) == [str(model.resolve())]
    assert entries[str(model.resolve())]["size"] == model.stat().st_size


def test_second_call_uses_the_cache(
    model: Path, layout: StateLayout, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = gguf_digest(model, layout)

    def must_not_hash(path: Path) -> str:
        raise AssertionError(f"hashed {path} again")

    monkeypatch.setattr(digest_module, "sha256_file", must_not_hash)
    assert gguf_digest(model, layout) == first


def test_a_changed_file_gets_a_new_digest(model: Path, layout: StateLayout) -> None:
    before = gguf_digest(model, layout)
    stat = model.stat()
    model.write_bytes(b"GGUF" + b"\x01" * (stat.st_size - 4))  # same size, new content
    os.utime(model, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    after = gguf_digest(model, layout)
    assert after != before
    assert after == hashlib.sha256(model.read_bytes()).hexdigest()


def test_a_damaged_cache_is_rebuilt(model: Path, layout: StateLayout) -> None:
    (layout.cache / CACHE_NAME).write_text("{not json")
    assert gguf_digest(model, layout) == hashlib.sha256(model.read_bytes()).hexdigest()
    assert json.loads((layout.cache / CACHE_NAME).read_text())["schema_version"] == 1


def test_a_lying_cache_entry_with_other_size_is_ignored(model: Path, layout: StateLayout) -> None:
    key = str(model.resolve())
    entry = {"size": 1, "mtime_ns": model.stat().st_mtime_ns, "sha256": "0" * 64}
    (layout.cache / CACHE_NAME).write_text(
        json.dumps({"schema_version": 1, "entries": {key: entry}})
    )
    assert gguf_digest(model, layout) != "0" * 64


def test_missing_model_is_runner_not_found(tmp_path: Path, layout: StateLayout) -> None:
    with pytest.raises(RunnerNotFound, match="model file not found"):
        gguf_digest(tmp_path / "absent.gguf", layout)
