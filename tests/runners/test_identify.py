from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.support.ports import free_port
from tests.support.runners import Recorded, recorded, serve_recorded
from vibey_gh.config import LocalModels
from vibey_gh.errors import RunnerError, RunnerNotFound
from vibey_gh.runners.llamacpp.identify import version_from_props
from vibey_gh.runners.llamacpp.models import default_model_path, installed_version
from vibey_gh.runners.ollama.identify import identify_ollama
from vibey_gh.runners.ollama.wire import digest_from_tags
from vibey_gh.runners.registry import identify_production
from vibey_gh.state import StateLayout

# --- llama-server: /props --------------------------------------------------------------------


def test_version_is_the_build_info_of_props() -> None:
    assert version_from_props(recorded("llama_server/props_b4747.json").body) == "b4747-d04e7163"
    assert version_from_props(recorded("llama_server/props.json").body) == "b0-unknown"
    assert version_from_props({"build_info": ""}) is None
    assert version_from_props("not an object") is None


# --- ollama: /api/version and /api/tags ------------------------------------------------------


def test_tags_give_the_digest_with_or_without_latest() -> None:
    tags = recorded("ollama/era_b/tags.json").body
    digest = "a80c4f17acd55265feec403c7aef86be0c25983ab279d83f3bcd3abbcb5b8b72"
    assert digest_from_tags(tags, "llama3.2:3b") == digest
    assert digest_from_tags(tags, "llama3.2") is None
    latest = {"models": [{"name": "mistral:latest", "digest": "abc123"}]}
    assert digest_from_tags(latest, "mistral") == "abc123"
    assert digest_from_tags({"models": "nonsense"}, "mistral") is None


def test_identify_ollama_reads_version_and_digest() -> None:
    routes = {
        "/api/version": recorded("ollama/era_c/version.json"),
        "/api/tags": recorded("ollama/era_c/tags.json"),
    }
    with serve_recorded(routes) as production:
        info = identify_ollama(production.url, "gpt-oss:20b")
        absent = identify_ollama(production.url, "qwen3:8b")
    assert (info.kind, info.version) == ("ollama", "0.32.15")
    assert info.model_digest is not None and info.model_digest.startswith("17052f91a42e")
    assert absent.model_digest is None and "qwen3:8b" in absent.missing["model_digest"]


def test_identify_ollama_unreachable_raises_runner_error() -> None:
    with pytest.raises(RunnerError, match="no answer from"):
        identify_ollama(f"http://127.0.0.1:{free_port()}", "llama3.2:3b")


# --- identify_production ---------------------------------------------------------------------


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
        config = LocalModels(runner="llama-server", model=str(model), production_url=production.url)
        info = identify_production(config, StateLayout(tmp_path / "state"))
    assert (info.kind, info.version) == ("llama-server", "b4747-d04e7163")
    assert info.model_digest == hashlib.sha256(b"GGUF-q").hexdigest()


def test_identify_llama_server_without_build_info_raises(tmp_path: Path) -> None:
    model = tmp_path / "q.gguf"
    model.write_bytes(b"GGUF-q")
    with serve_recorded({"/props": Recorded(404, {"error": "nope"})}) as production:
        config = LocalModels(runner="llama-server", model=str(model), production_url=production.url)
        with pytest.raises(RunnerError, match="gave no build_info"):
            identify_production(config)


def test_ollama_identity_carries_productions_environment_and_slots() -> None:
    routes = {
        "/api/version": recorded("ollama/era_b/version.json"),
        "/api/tags": recorded("ollama/era_b/tags.json"),
    }
    unit = {"OLLAMA_NUM_PARALLEL": "4", "OLLAMA_FLASH_ATTENTION": "1", "OLLAMA_MODELS": "/m"}

    def systemd(names: tuple[str, ...]) -> tuple[dict[str, str], str, str | None]:
        return {k: v for k, v in unit.items() if k in names}, "systemctl show ollama", None

    with serve_recorded(routes) as production:
        config = LocalModels(runner="ollama", model="llama3.2:3b", production_url=production.url)
        info = identify_production(config, read_environment=systemd)
    assert info.settings == {"OLLAMA_FLASH_ATTENTION": "1"}
    assert info.settings_source == "systemctl show ollama" and info.serving_slots == 4


def test_llama_server_identity_carries_runner_args_and_the_slots_props_names(
    tmp_path: Path,
) -> None:
    model = tmp_path / "q.gguf"
    model.write_bytes(b"GGUF-q")
    with serve_recorded({"/props": recorded("llama_server/props.json")}) as production:
        config = LocalModels(
            runner="llama-server",
            model=str(model),
            production_url=production.url,
            runner_args=("-fa", "on"),
        )
        info = identify_production(config, StateLayout(tmp_path / "state"))
    assert info.serving_slots == 2 and info.settings == {"runner_args": "-fa on"}


# --- what identifying costs a whole process --------------------------------------------------

HEAVY_MODULES = ("httpx", "xllamacpp", "psutil", "http.client", "ssl", "click")

PRODUCTION_ROUTES = {
    "embedded": {},
    "llama-server": {"/props": recorded("llama_server/props_b4747.json")},
    "ollama": {
        "/api/version": recorded("ollama/era_b/version.json"),
        "/api/tags": recorded("ollama/era_b/tags.json"),
    },
}


@contextmanager
def production_for(kind: str) -> Iterator[str | None]:
    """The production URL for `kind`: a recorded stand-in, or none for the embedded runner."""
    if kind == "embedded":
        yield None
        return
    with serve_recorded(PRODUCTION_ROUTES[kind]) as production:
        yield production.url


@pytest.mark.parametrize("kind", ["embedded", "llama-server", "ollama"])
def test_identifying_production_imports_neither_httpx_nor_llama_cpp(
    kind: str, tmp_path: Path
) -> None:
    settings: dict[str, str] = {"runner": kind}
    if kind == "ollama":
        settings["model"] = "llama3.2:3b"
    elif kind == "llama-server":
        model = tmp_path / "q.gguf"
        model.write_bytes(b"GGUF-q")
        settings["model"] = str(model)
    env = dict(os.environ, VIBEY_GH_SLOTS_DIR=str(tmp_path / "slots"))
    with production_for(kind) as url:
        if url is not None:
            settings["production_url"] = url
        probe = (
            "import sys\n"
            "from vibey_gh.config import LocalModels\n"
            "from vibey_gh.runners.registry import identify_production\n"
            f"info = identify_production(LocalModels(**{settings!r}))\n"
            "assert info.kind == " + repr(kind) + ", info\n"
            "assert info.model_digest, info\n"
            f"print(sorted(m for m in {HEAVY_MODULES!r} if m in sys.modules))\n"
        )
        done = subprocess.run(
            [sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=False
        )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
