from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest
from runner_support import Recorded, free_port, recorded, serve_recorded

from vibey_gh.config import LocalModels
from vibey_gh.errors import BadInput, RunnerError, RunnerNotFound
from vibey_gh.runners.embedded import EmbeddedRunner
from vibey_gh.runners.llama_server import LlamaServerRunner
from vibey_gh.runners.models import default_model_path, installed_version
from vibey_gh.runners.ollama import OllamaRunner
from vibey_gh.runners.production import LlamaServerWatch, OllamaWatch
from vibey_gh.runners.registry import (
    RUNNER_NAMES,
    identify_production,
    production_watch,
    runner_for,
)
from vibey_gh.state import StateLayout


def test_runner_for_each_kind() -> None:
    assert isinstance(runner_for("embedded"), EmbeddedRunner)
    assert isinstance(runner_for("llama-server"), LlamaServerRunner)
    assert isinstance(runner_for("ollama"), OllamaRunner)
    assert [runner_for(k).kind for k in RUNNER_NAMES] == list(RUNNER_NAMES)


def test_unknown_kind_lists_the_valid_names() -> None:
    with pytest.raises(BadInput, match="valid runners: embedded, llama-server, ollama"):
        runner_for("vllm")


def test_production_watch_follows_the_runner_kind() -> None:
    ollama = production_watch(LocalModels(runner="ollama"))
    assert isinstance(ollama, OllamaWatch) and ollama.base_url == "http://127.0.0.1:11434"
    llama = production_watch(LocalModels(runner="llama-server", production_url="http://h:9000"))
    assert isinstance(llama, LlamaServerWatch) and llama.base_url == "http://h:9000"
    assert isinstance(production_watch(LocalModels(runner="embedded")), LlamaServerWatch)


def test_identify_embedded_is_package_version_and_gguf_sha256(tmp_path: Path) -> None:
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF-test-model")
    info = identify_production(LocalModels(runner="embedded", model=str(model)))
    assert info.kind == "embedded"
    assert info.version == f"xllamacpp {installed_version('xllamacpp')}"
    assert info.model == str(model.resolve())
    assert info.model_digest == hashlib.sha256(b"GGUF-test-model").hexdigest()


def test_identify_embedded_default_model_uses_the_shipped_file() -> None:
    info = identify_production(LocalModels(runner="embedded"))
    assert info.model == str(default_model_path())
    assert info.model_digest is not None and len(info.model_digest) == 64


def test_identify_embedded_with_a_missing_model_is_runner_not_found(tmp_path: Path) -> None:
    with pytest.raises(RunnerNotFound):
        identify_production(LocalModels(runner="embedded", model=str(tmp_path / "no.gguf")))


def test_identify_ollama_from_production(tmp_path: Path) -> None:
    routes = {
        "/api/version": recorded("ollama/era_b/version.json"),
        "/api/tags": recorded("ollama/era_b/tags.json"),
    }
    with serve_recorded(routes) as production:
        config = LocalModels(runner="ollama", model="llama3.2:3b", production_url=production.url)
        info = identify_production(config)
    assert (info.kind, info.version, info.model) == ("ollama", "0.24.0", "llama3.2:3b")
    assert info.model_digest == "a80c4f17acd55265feec403c7aef86be0c25983ab279d83f3bcd3abbcb5b8b72"


def test_identify_unreachable_ollama_raises_runner_error() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(RunnerError, match=f"no answer from {url}/api/version"):
        identify_production(LocalModels(runner="ollama", model="m", production_url=url))


def test_identify_llama_server_reads_build_info_and_hashes_the_gguf(tmp_path: Path) -> None:
    model = tmp_path / "q.gguf"
    model.write_bytes(b"GGUF-q")
    with serve_recorded({"/props": recorded("llama_server/props_b4747.json")}) as production:
        config = LocalModels(
            runner="llama-server", model=str(model), production_url=production.url
        )
        info = identify_production(config, StateLayout(tmp_path / "state"))
    assert (info.kind, info.version) == ("llama-server", "b4747-d04e7163")
    assert info.model_digest == hashlib.sha256(b"GGUF-q").hexdigest()


def test_identify_llama_server_without_build_info_raises(tmp_path: Path) -> None:
    model = tmp_path / "q.gguf"
    model.write_bytes(b"GGUF-q")
    with serve_recorded({"/props": Recorded(404, {"error": "nope"})}) as production:
        config = LocalModels(
            runner="llama-server", model=str(model), production_url=production.url
        )
        with pytest.raises(RunnerError, match="gave no build_info"):
            identify_production(config)


def test_identifying_production_imports_neither_httpx_nor_llama_cpp() -> None:
    probe = (
        "import sys\n"
        "from vibey_gh.config import LocalModels\n"
        "from vibey_gh.runners.registry import identify_production\n"
        "identify_production(LocalModels(runner='embedded'))\n"
        "print(sorted(m for m in ('httpx', 'xllamacpp', 'psutil') if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=os.environ, check=True
    )
    assert done.stdout.strip() == "[]"
