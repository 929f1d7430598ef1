"""A llama-server built without git metadata says "b0-unknown": its version is keyed by the
binary's own sha256 as well, so evidence never passes from one such build to another."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import psutil
import pytest

from tests.support import hostile
from tests.support.hostile import hostile_production
from vibey_gh.config import LocalModels
from vibey_gh.interfaces.identity import nameless_part, names_no_build
from vibey_gh.runners import digest as digest_module
from vibey_gh.runners.builds import keyed_to_binary
from vibey_gh.runners.llamacpp.identify import identify_llama_server
from vibey_gh.runners.llamacpp.kinds import LlamaServerKind
from vibey_gh.state import StateLayout


def fake_llama_server(folder: Path, build: str, comment: str) -> Path:
    """A llama-server whose --version names `build` like llama.cpp does ("version: 0 (unknown)")."""
    number, _, commit = build.partition("-")
    binary = folder / comment / "llama-server"
    binary.parent.mkdir(parents=True)
    binary.write_text(f"#!/bin/sh\n# {comment}\necho 'version: {number[1:]} ({commit})' >&2\n")
    binary.chmod(0o755)
    return binary


def test_what_names_no_build() -> None:
    for nameless in ("b0-unknown", "", "dev", "unknown", "B0-UNKNOWN ", "b0-deadbeef"):
        assert names_no_build(nameless), nameless
    for named in (None, "b4747-2d219b38", "0.32.15", "b10-unknown+sha256:0123456789abcdef"):
        assert not names_no_build(named), named


def test_two_builds_that_say_b0_unknown_get_two_versions(
    tmp_path: Path, layout: StateLayout, monkeypatch: pytest.MonkeyPatch
) -> None:
    kind = LlamaServerKind()
    monkeypatch.setenv("VIBEY_GH_SLOTS_DIR", str(layout.root))
    versions = []
    for comment in ("one", "two"):
        binary = fake_llama_server(tmp_path, "b0-unknown", comment)
        path, version = kind.calibration_version(LocalModels(runner_binary=str(binary)))
        digest = hashlib.sha256(binary.read_bytes()).hexdigest()
        assert (path, version) == (str(binary), f"b0-unknown+sha256:{digest[:16]}")
        assert nameless_part(version) == "b0-unknown"
        versions.append(version)
    assert versions[0] != versions[1]
    named = fake_llama_server(tmp_path, "b4747-2d219b38", "named")
    assert kind.calibration_version(LocalModels(runner_binary=str(named)))[1] == "b4747-2d219b38"


def test_the_binary_s_digest_is_cached_like_the_model_s(
    tmp_path: Path, layout: StateLayout, monkeypatch: pytest.MonkeyPatch
) -> None:
    binary = fake_llama_server(tmp_path, "b0-unknown", "cached")
    first = keyed_to_binary("b0-unknown", binary, layout)

    def no_hashing(path: Path) -> str:
        raise AssertionError(f"{path} hashed again")

    monkeypatch.setattr(digest_module, "sha256_file", no_hashing)
    assert keyed_to_binary("b0-unknown", binary, layout) == first
    binary.write_text(binary.read_text() + "# rebuilt\n")
    os.utime(binary, ns=(1, 1))
    with pytest.raises(AssertionError, match="hashed again"):
        keyed_to_binary("b0-unknown", binary, layout)
    assert keyed_to_binary("b0-unknown", tmp_path / "gone", layout) is None


def test_production_saying_b0_unknown_is_keyed_by_the_binary_that_listens(
    tmp_path: Path, layout: StateLayout, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = tmp_path / "tiny.gguf"
    model.write_bytes(b"GGUF" + bytes(64))
    props = {**hostile.IDLE_ANSWERS["/props"], "build_info": "b0-unknown"}
    monkeypatch.setitem(hostile.IDLE_ANSWERS, "/props", props)
    with hostile_production("idle") as production:  # this very process listens
        config = LocalModels(runner="llama-server", model=str(model), production_url=production.url)
        info = identify_llama_server(config, layout)
    assert info.version == keyed_to_binary("b0-unknown", psutil.Process().exe(), layout)
    assert info.version != "b0-unknown" and "version" not in info.missing


def test_production_s_listener_is_cached_while_that_very_process_listens(
    tmp_path: Path, layout: StateLayout, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vibey_gh.platforms.process import ports
    from vibey_gh.runners.builds import CACHE_NAME, production_binary

    with hostile_production("idle") as production:
        first = production_binary(production.url, layout)
        assert first is not None and first.samefile(psutil.Process().exe())

        def no_scan(port: int) -> None:
            raise AssertionError("every socket read again")

        monkeypatch.setattr(ports, "port_listener", no_scan)
        assert production_binary(production.url, layout) == first  # the cache, checked
        cache = layout.cache / CACHE_NAME
        edited = cache.read_text().replace(str(first), "/usr/bin/env")
        cache.write_text(edited)  # an executable the process does not run is not believed
        with pytest.raises(AssertionError, match="every socket read again"):
            production_binary(production.url, layout)
    assert production_binary("http://10.0.0.9:8080", layout) is None  # not on this machine
