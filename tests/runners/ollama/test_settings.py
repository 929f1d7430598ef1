"""Production's own runner settings: what the calibration runner gets and what is fingerprinted."""

from __future__ import annotations

from vibey_gh.config import LocalModels
from vibey_gh.runners.contract import ProductionSettings
from vibey_gh.runners.ollama.settings import calibration_base_env
from vibey_gh.runners.registry import production_settings

SHELL = {
    "HOME": "/Users/me",
    "PATH": "/usr/bin",
    "OLLAMA_FLASH_ATTENTION": "0",  # a shell's variable production never sees
    "AWS_SECRET_ACCESS_KEY": "x",
    "OLLAMA_MODELS": "/Volumes/models",
}


def reader(values: dict[str, str], missing: str | None = None):  # type: ignore[no-untyped-def]
    asked: list[tuple[str, ...]] = []

    def read(names: tuple[str, ...]) -> tuple[dict[str, str], str, str | None]:
        asked.append(names)
        return {k: v for k, v in values.items() if k in names}, "launchctl getenv", missing

    return read, asked


def test_llama_server_settings_are_its_runner_args() -> None:
    config = LocalModels(runner="llama-server", runner_args=("-fa", "on", "-ctk", "q8_0"))
    settings = production_settings(config)
    assert settings.fingerprinted == {"runner_args": "-fa on -ctk q8_0"}
    assert production_settings(LocalModels(runner="llama-server")).fingerprinted == {}
    assert production_settings(LocalModels()).fingerprinted == {}


def test_ollama_reads_productions_environment_and_fingerprints_its_capacity_settings() -> None:
    read, asked = reader(
        {
            "OLLAMA_KV_CACHE_TYPE": "q8_0",
            "OLLAMA_NUM_PARALLEL": "3",
            "OLLAMA_CONTEXT_LENGTH": "32768",
            "OLLAMA_MODELS": "/srv/ollama",
        }
    )
    settings = production_settings(LocalModels(runner="ollama"), read)
    assert asked and "OLLAMA_FLASH_ATTENTION" in asked[0] and "OLLAMA_NUM_PARALLEL" in asked[0]
    # what the calibration sets per step (slots, window) and the store are not fingerprinted
    assert settings.fingerprinted == {"OLLAMA_KV_CACHE_TYPE": "q8_0"}
    assert settings.serving_slots == 3
    assert settings.source == "launchctl getenv"


def test_an_unset_num_parallel_is_ollamas_default_and_an_unread_one_unknown() -> None:
    read, _ = reader({})
    assert production_settings(LocalModels(runner="ollama"), read).serving_slots == 1
    unread, _ = reader({}, missing="launchctl not found")
    settings = production_settings(LocalModels(runner="ollama"), unread)
    assert settings.serving_slots is None and settings.missing == "launchctl not found"


def test_configured_runner_env_wins_over_production_and_is_not_read() -> None:
    read, asked = reader({"OLLAMA_KV_CACHE_TYPE": "f16"})
    config = LocalModels(runner="ollama", runner_env={"OLLAMA_KV_CACHE_TYPE": "q4_0"})
    settings = production_settings(config, read)
    assert asked == []
    assert settings.fingerprinted == {"OLLAMA_KV_CACHE_TYPE": "q4_0"}
    assert settings.source == "config runner_env"


def test_the_calibration_runner_gets_productions_settings_never_the_shells() -> None:
    settings = ProductionSettings(
        {"OLLAMA_KV_CACHE_TYPE": "q8_0"},
        {"OLLAMA_KV_CACHE_TYPE": "q8_0", "OLLAMA_NUM_PARALLEL": "4"},
        "launchctl getenv",
    )
    env = calibration_base_env(settings, SHELL)
    assert env == {
        "HOME": "/Users/me",
        "PATH": "/usr/bin",
        "OLLAMA_KV_CACHE_TYPE": "q8_0",
        "OLLAMA_MODELS": "/Volumes/models",
    }
    # no OLLAMA_MODELS anywhere: Ollama's own default under HOME
    bare = calibration_base_env(ProductionSettings(), {"HOME": "/home/u"})
    assert bare["OLLAMA_MODELS"] == "/home/u/.ollama/models"
