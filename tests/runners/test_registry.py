from __future__ import annotations

import pytest

from vibey_gh.config import LocalModels
from vibey_gh.errors import BadInput
from vibey_gh.runners.embedded import EmbeddedRunner
from vibey_gh.runners.llama_server import LlamaServerRunner
from vibey_gh.runners.ollama import OllamaRunner
from vibey_gh.runners.production import LlamaServerWatch, OllamaWatch
from vibey_gh.runners.registry import (
    RUNNER_NAMES,
    production_watch,
    runner_for,
)


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
