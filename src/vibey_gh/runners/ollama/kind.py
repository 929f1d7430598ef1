"""The Ollama kind (`contract.RunnerKind`): watched through /api/ps, chatted with over
/api/chat, models by name, its environment as its settings; `registry` names it.

Light on purpose, as every kind: what `slots allowed` needs (identity, settings) is imported
here, everything else (servers, watches and chat clients over httpx, process handling) is in
`serving`, loaded the first time it is asked.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from ..contract import FAIL, OK, WARN, Check, RunnerKind
from .settings import SYSTEMD_UNIT, measured_environment, measured_variables, production_settings

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
    from .serving import OllamaServing


def serving() -> OllamaServing:
    """Ollama's calibration server, watch, chat client and calibration identity."""
    # lazy: httpx and process handling cost `slots allowed` more than its budget
    from .serving import SERVING

    return SERVING


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
        # lazy: a declared concurrent_runs reads the kinds' names and ports, never an identity
        from .identify import identify_ollama_production

        return identify_ollama_production(config, read_environment, state)

    def watch(self, base_url: str) -> ProductionWatch:
        return serving().watch(base_url)

    def parallelism(self, config: RunnerConfig, probes: PlatformProbes) -> RunnerParallelism:
        # the Ollama service's environment: the macOS app, a systemd unit, else a note; with
        # the configured runner_env's capacity variables, which the evidence was measured with
        return probes.service_parallelism(SYSTEMD_UNIT, measured_variables(config.runner_env or {}))

    def calibration_runner(
        self,
        state: StateLayout | None = None,
        config: RunnerConfig | None = None,
    ) -> Runner:
        settings = self.production_settings(config) if config is not None else None
        return serving().calibration_runner(settings, state)

    def chat_client(self, base_url: str, model: str) -> ChatClient:
        return serving().chat_client(base_url, model)

    def log_patterns(self) -> tuple[LogPattern, ...]:
        return serving().log_patterns()

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
        return production_settings(config, read_environment)

    def measured_settings(
        self, measured: Mapping[str, object], read_environment: EnvironmentReader | None = None
    ) -> dict[str, object]:
        return measured_environment(measured, read_environment)

    def calibration_version(
        self, config: RunnerConfig, environ: Mapping[str, str] | None = None
    ) -> tuple[str, str | None]:
        return serving().calibration_version(self.name, config, environ)

    def identify_calibration(
        self,
        config: RunnerConfig,
        state: StateLayout | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> RunnerInfo:
        return serving().identify_calibration(self.name, config, state, environ)
