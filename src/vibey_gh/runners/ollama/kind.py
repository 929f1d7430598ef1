"""The Ollama kind (`contract.RunnerKind`): watched through /api/ps, chatted with over
/api/chat, models by name, its environment as its settings; `registry` names it.

Light on purpose, as every kind: adapters are imported inside the method that needs them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

from ..contract import FAIL, OK, WARN, Check, RunnerKind

if TYPE_CHECKING:
    from ...interfaces.identity import RunnerInfo
    from ...interfaces.slots_interface import RunnerParallelism
    from ...platforms.device.probes import PlatformProbes
    from ...state import StateLayout
    from ..contract import (
        ChatClient,
        EnvironmentReader,
        ProductionSettings,
        ProductionWatch,
        Runner,
        RunnerConfig,
    )
    from ..log_patterns import LogPattern


class OllamaKind(RunnerKind):
    """Ollama: watched through /api/ps, chatted with over /api/chat, models by name."""

    name = "ollama"
    default_port = 11434
    process_names = ("ollama",)

    def identify_production(
        self,
        config: RunnerConfig,
        state: StateLayout | None = None,
        read_environment: EnvironmentReader | None = None,
    ) -> RunnerInfo:
        from .identify import identify_ollama_production

        return identify_ollama_production(config, read_environment, state)

    def watch(self, base_url: str) -> ProductionWatch:
        from .watch import OllamaWatch

        return OllamaWatch(base_url)

    def parallelism(self, config: RunnerConfig, probes: PlatformProbes) -> RunnerParallelism:
        # the Ollama service's environment: the macOS app, a systemd unit, else a note; with
        # the configured runner_env's capacity variables, which the evidence was measured with
        from .settings import SYSTEMD_UNIT, measured_variables

        return probes.service_parallelism(SYSTEMD_UNIT, measured_variables(config.runner_env or {}))

    def calibration_runner(
        self,
        state: StateLayout | None = None,
        config: RunnerConfig | None = None,
    ) -> Runner:
        from .runner import OllamaRunner

        settings = self.production_settings(config) if config is not None else None
        return OllamaRunner(settings=settings, state=state)

    def chat_client(self, base_url: str, model: str) -> ChatClient:
        from .chat import OllamaChatClient

        return OllamaChatClient(base_url, model)

    def log_patterns(self) -> tuple[LogPattern, ...]:
        # every Ollama era copies the llama.cpp lines of the engine it runs into its log
        from ..llamacpp.log_lines import LLAMA_CPP_PATTERNS
        from .log_lines import OLLAMA_PATTERNS

        return OLLAMA_PATTERNS + LLAMA_CPP_PATTERNS

    def model_file_bytes(self, config: RunnerConfig) -> int | None:
        """None: Ollama's named models are placed by Ollama itself (and unloaded when idle)."""
        return None

    def model_check(self, config: RunnerConfig, production: RunnerInfo | None) -> Check:
        name = "model"
        if production is None:
            return Check(
                name,
                WARN,
                f"{config.model}: cannot ask production whether it is pulled",
                f"start Ollama, then check with: ollama list (ollama pull {config.model})",
            )
        if production.model_digest is None:
            return Check(name, FAIL, f"{config.model} is not pulled", f"ollama pull {config.model}")
        return Check(name, OK, f"{config.model} pulled ({production.model_digest[:12]})")

    def production_settings(
        self, config: RunnerConfig, read_environment: EnvironmentReader | None = None
    ) -> ProductionSettings:
        from .settings import production_settings

        return production_settings(config, read_environment)

    def measured_settings(
        self, measured: Mapping[str, object], read_environment: EnvironmentReader | None = None
    ) -> dict[str, object]:
        from .settings import measured_environment

        return measured_environment(measured, read_environment)

    def _calibration_env(
        self, config: RunnerConfig, environ: Mapping[str, str] | None
    ) -> tuple[dict[str, str], ProductionSettings]:
        """The environment `ollama --version` runs with: the calibration server's, pointed at
        the calibration port, where nothing listens yet (so the answer is the binary's own)."""
        from ..process import LOOPBACK
        from .settings import calibration_base_env

        settings = self.production_settings(config)
        run_env = calibration_base_env(settings, os.environ if environ is None else environ)
        run_env["OLLAMA_HOST"] = f"{LOOPBACK}:{config.calibration_port}"
        return run_env, settings

    def calibration_version(
        self, config: RunnerConfig, environ: Mapping[str, str] | None = None
    ) -> tuple[str, str | None]:
        from ..llamacpp.identify import keyed_to_binary
        from ..process import find_executable, run_version_command
        from .binary import ollama_version

        binary = find_executable(config.runner_binary, self.name)
        run_env, _ = self._calibration_env(config, environ)
        version = ollama_version(run_version_command([binary, "--version"], run_env))
        return binary, keyed_to_binary(version, binary)

    def identify_calibration(
        self,
        config: RunnerConfig,
        state: StateLayout | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> RunnerInfo:
        from pathlib import Path

        from msgspec.structs import replace

        from ...interfaces.identity import RunnerInfo
        from ..llamacpp.identify import keyed_to_binary
        from ..process import find_executable, run_version_command
        from .binary import manifest_digest, ollama_manifest, ollama_version
        from .settings import MODELS_VARIABLE

        binary = find_executable(config.runner_binary, self.name)
        run_env, settings = self._calibration_env(config, environ)
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
        info = RunnerInfo(self.name, version, config.model, digest, missing)
        return replace(
            info,
            settings=settings.fingerprinted,
            settings_source=settings.source,
            serving_slots=None,
        )
