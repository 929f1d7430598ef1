"""What the Ollama kind does beyond saying who production is: start a calibration server, watch
and chat with Ollama, read its log, say which binary and model store a calibration runs.

`kind` loads this module the first time one of these is asked: `slots allowed` identifies
production through `kind` on every decision and never needs httpx or a process handle.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from msgspec.structs import replace

from ...interfaces.identity import RunnerInfo
from ...state import StateLayout
from ..builds import keyed_to_binary
from ..contract import ChatClient, ProductionSettings, ProductionWatch, Runner, RunnerConfig
from ..llamacpp.log_lines import LLAMA_CPP_PATTERNS
from ..log_patterns import LogPattern
from ..process import LOOPBACK, find_executable, run_version_command
from .binary import manifest_digest, ollama_manifest, ollama_version
from .chat import OllamaChatClient
from .log_lines import OLLAMA_PATTERNS
from .runner import OllamaRunner
from .settings import MODELS_VARIABLE, calibration_base_env, production_settings
from .watch import OllamaWatch


class OllamaServing:
    """Ollama's calibration server, watch, chat client, log table and calibration identity."""

    def watch(self, base_url: str) -> ProductionWatch:
        return OllamaWatch(base_url)

    def calibration_runner(
        self, settings: ProductionSettings | None, state: StateLayout | None
    ) -> Runner:
        return OllamaRunner(settings=settings, state=state)

    def chat_client(self, base_url: str, model: str) -> ChatClient:
        return OllamaChatClient(base_url, model)

    def log_patterns(self) -> tuple[LogPattern, ...]:
        # every Ollama era copies the llama.cpp lines of the engine it runs into its log
        return OLLAMA_PATTERNS + LLAMA_CPP_PATTERNS

    def calibration_env(
        self, config: RunnerConfig, environ: Mapping[str, str] | None
    ) -> tuple[dict[str, str], ProductionSettings]:
        """The environment `ollama --version` runs with: the calibration server's, pointed at
        the calibration port, where nothing listens yet (so the answer is the binary's own)."""
        settings = production_settings(config)
        run_env = calibration_base_env(settings, os.environ if environ is None else environ)
        run_env["OLLAMA_HOST"] = f"{LOOPBACK}:{config.calibration_port}"
        return run_env, settings

    def calibration_version(
        self, kind_name: str, config: RunnerConfig, environ: Mapping[str, str] | None = None
    ) -> tuple[str, str | None]:
        binary = find_executable(config.runner_binary, kind_name)
        run_env, _ = self.calibration_env(config, environ)
        version = ollama_version(run_version_command([binary, "--version"], run_env))
        return binary, keyed_to_binary(version, binary)

    def identify_calibration(
        self,
        kind_name: str,
        config: RunnerConfig,
        state: StateLayout | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> RunnerInfo:
        binary = find_executable(config.runner_binary, kind_name)
        run_env, settings = self.calibration_env(config, environ)
        said = ollama_version(run_version_command([binary, "--version"], run_env))
        # a development build ("0.0.0") is keyed to its binary's sha256, as production's is
        version = keyed_to_binary(said, binary, state)
        missing: dict[str, str] = {}
        if said is None:
            missing["version"] = f"`{binary} --version` did not name a version"
        elif version is None:
            missing["version"] = f"{binary} names no build ({said!r}) and could not be read"
        manifest = ollama_manifest(Path(run_env[MODELS_VARIABLE]), config.model)
        try:
            digest: str | None = manifest_digest(manifest)
        except OSError as exc:
            digest = None
            missing["model_digest"] = (
                f"no manifest for {config.model} at {manifest} ({exc.strerror})"
            )
        info = RunnerInfo(kind_name, version, config.model, digest, missing)
        return replace(
            info,
            settings=settings.fingerprinted,
            settings_source=settings.source,
            serving_slots=None,
        )


SERVING = OllamaServing()
