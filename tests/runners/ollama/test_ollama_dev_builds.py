"""An Ollama built without its release flags says "0.0.0": its version is keyed by the
binary's own sha256 as well (as llama-server's nameless builds are), so evidence never passes
from one development build to another, and evidence keyed that way still gates."""

from __future__ import annotations

import hashlib
from pathlib import Path

import psutil
import pytest
from msgspec.structs import replace

from tests.slots.gate.test_allowed import RUNNER, config, deps_for, good_sweep, record
from tests.support import hostile
from tests.support.hostile import hostile_production
from tests.support.runners import write_fake_ollama
from vibey_gh.config import LocalModels
from vibey_gh.interfaces.identity import nameless_part, names_no_build
from vibey_gh.runners.builds import keyed_to_binary
from vibey_gh.runners.ollama.kind import OllamaKind
from vibey_gh.slots.gate.allowed import decide_allowed
from vibey_gh.state import StateLayout

DIGEST = "ab" * 32


def test_an_ollama_development_build_names_no_build() -> None:
    for nameless in ("0.0.0", "0.0.0-dev", " 0.0.0 "):
        assert names_no_build(nameless), nameless
    for named in ("0.32.15", "10.0.0", "0.0.1", "0.0.0+sha256:0123456789abcdef"):
        assert not names_no_build(named), named


def test_production_saying_0_0_0_is_keyed_by_the_binary_that_listens(
    layout: StateLayout, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(hostile.IDLE_ANSWERS, "/api/version", {"version": "0.0.0"})
    tags = {"models": [{"name": "m:latest", "digest": DIGEST}]}
    monkeypatch.setitem(hostile.IDLE_ANSWERS, "/api/tags", tags)
    with hostile_production("idle") as production:  # this very process listens
        settings = LocalModels(runner="ollama", model="m", production_url=production.url)
        info = OllamaKind().identify_production(replace(settings, runner_env={}), layout)
    assert info.version == keyed_to_binary("0.0.0", psutil.Process().exe(), layout)
    assert nameless_part(info.version) == "0.0.0" and "version" not in info.missing


def test_the_calibration_binary_saying_0_0_0_is_keyed_by_its_sha256(
    tmp_path: Path, layout: StateLayout, monkeypatch: pytest.MonkeyPatch
) -> None:
    binary = write_fake_ollama(tmp_path / "bin")
    monkeypatch.setenv("VIBEY_GH_SLOTS_DIR", str(layout.root))
    # the stand-in's version comes from its environment: production's, which the run keeps
    env = {"FAKE_OLLAMA_VERSION": "0.0.0"}
    settings = LocalModels(runner="ollama", runner_binary=str(binary), runner_env=env)
    path, version = OllamaKind().calibration_version(settings)
    digest = hashlib.sha256(binary.read_bytes()).hexdigest()
    assert (path, version) == (str(binary), f"0.0.0+sha256:{digest[:16]}")


def test_evidence_keyed_to_a_development_build_gates_that_build_only(tmp_path: Path) -> None:
    this_build = replace(RUNNER, version="0.0.0+sha256:0123456789abcdef")
    record(tmp_path, good_sweep(), runner=this_build)
    assert decide_allowed(config("measured"), deps=deps_for(tmp_path, this_build)).allowed == 2
    another = replace(RUNNER, version="0.0.0+sha256:fedcba9876543210")
    answer = decide_allowed(config("measured"), deps=deps_for(tmp_path, another))
    assert answer.allowed == 1 and answer.reason_code == "unmeasured"
    assert "runner 0.0.0+sha256:0123456789abcdef → 0.0.0+sha256:fedcba9876543210" in answer.reason
