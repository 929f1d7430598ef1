"""The calibration runner's identity from its binary and the model store."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from tests.support.runners import write_python_executable
from vibey_gh.config import LocalModels
from vibey_gh.errors import BadInput
from vibey_gh.runners.llamacpp.identify import llama_server_version
from vibey_gh.runners.llamacpp.serving import check_runner_args
from vibey_gh.runners.ollama.binary import ollama_manifest, ollama_version
from vibey_gh.runners.registry import identify_calibration_binary


@pytest.mark.parametrize(
    ("text", "version"),
    [
        (
            "version: 4747 (2d219b38)\nbuilt with cc (GCC) 12 for x86_64-linux-gnu\n",
            "b4747-2d219b38",
        ),
        ("version: 0.6.0-dev (build 11434, commit unknown)\n", "b11434-unknown"),
        ("no version here", None),
    ],
)
def test_llama_server_versions_read_as_props_spells_them(text: str, version: str | None) -> None:
    assert llama_server_version(text) == version


@pytest.mark.parametrize(
    ("text", "version"),
    [
        (
            "Warning: could not connect to a running Ollama instance\n"
            "Warning: client version is 0.32.15\n",
            "0.32.15",
        ),
        ("ollama version is 0.30.1\nWarning: client version is 0.32.15\n", "0.32.15"),
        ("ollama version is 0.32.15\n", "0.32.15"),
    ],
)
def test_ollama_versions_are_the_clients(text: str, version: str) -> None:
    assert ollama_version(text) == version


def test_ollama_manifests_are_found_where_ollama_keeps_them(tmp_path: Path) -> None:
    assert ollama_manifest(tmp_path, "qwen3:8b") == (
        tmp_path / "manifests/registry.ollama.ai/library/qwen3/8b"
    )
    assert ollama_manifest(tmp_path, "me/tuned") == (
        tmp_path / "manifests/registry.ollama.ai/me/tuned/latest"
    )
    assert ollama_manifest(tmp_path, "hf.co/org/model:Q4_K_M") == (
        tmp_path / "manifests/hf.co/org/model/Q4_K_M"
    )


FAKE_OLLAMA = """
import os, sys
assert sys.argv[1:] == ["--version"]
assert os.environ["OLLAMA_HOST"] == "127.0.0.1:11999", os.environ["OLLAMA_HOST"]
assert "LEAKED" not in os.environ
print("Warning: could not connect to a running Ollama instance")
print("Warning: client version is 0.32.15")
"""


def test_ollama_identity_without_a_running_production(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    binary = write_python_executable(tmp_path / "bin" / "ollama", FAKE_OLLAMA)
    manifest = ollama_manifest(tmp_path / "models", "qwen3:8b")
    manifest.parent.mkdir(parents=True)
    manifest.write_bytes(b'{"schemaVersion":2,"layers":[]}\n')
    config = LocalModels(
        runner="ollama",
        model="qwen3:8b",
        runner_binary=str(binary),
        calibration_port=11999,
        runner_env={"OLLAMA_KV_CACHE_TYPE": "q8_0"},
    )
    environ = {"PATH": "/usr/bin", "OLLAMA_MODELS": str(tmp_path / "models"), "LEAKED": "1"}
    info = identify_calibration_binary(config, environ=environ)
    assert info.version == "0.32.15"
    assert info.model_digest == hashlib.sha256(manifest.read_bytes()).hexdigest()
    assert info.settings == {"OLLAMA_KV_CACHE_TYPE": "q8_0"}
    missing = identify_calibration_binary(
        LocalModels(
            runner="ollama",
            model="absent",
            runner_binary=str(binary),
            calibration_port=11999,
            runner_env={},
        ),
        environ=environ,
    )
    assert (
        missing.model_digest is None and "no manifest for absent" in missing.missing["model_digest"]
    )


FAKE_LLAMA_SERVER = """
import sys
for arg in sys.argv[1:]:
    if arg == "--version":
        print("version: 0.6.0-dev (build 11434, commit unknown)")
        sys.exit(0)
    if arg not in ("-fa", "on"):
        print(f"error: invalid argument: {arg}", file=sys.stderr)
        sys.exit(1)
"""


def test_runner_args_llama_server_refuses_are_bad_input(tmp_path: Path) -> None:
    binary = str(write_python_executable(tmp_path / "llama-server", FAKE_LLAMA_SERVER))
    assert "build 11434" in check_runner_args(binary, ["-fa", "on"])
    with pytest.raises(BadInput, match="runner_args: llama-server refuses them: .*--flash-typo"):
        check_runner_args(binary, ["--flash-typo"])
