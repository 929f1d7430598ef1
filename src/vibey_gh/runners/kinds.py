"""The four runner kinds, each one `contract.RunnerKind`; `registry` names them.

Light on purpose: `slots allowed` identifies production through these on every decision, so
every adapter (httpx, llama.cpp, process handling) is imported inside the method that needs it.
Each kind's default port comes from `interfaces.runner_names`, which the config reads too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from ..interfaces.runner_names import DEFAULT_PORTS, default_production_url

if TYPE_CHECKING:
    from ..config import LocalModels, SimulatedModel
    from ..interfaces.identity import RunnerInfo
    from ..interfaces.slots_interface import ProductionWatch, Runner, RunnerParallelism
    from ..platforms.probes import PlatformProbes
    from ..state import StateLayout
    from .contract import ChatClient
    from .settings import EnvironmentReader


def port_of(production_url: str | None, default_port: int) -> int:
    """The port `production_url` names, else `default_port`."""
    if not production_url:
        return default_port
    try:
        return urlsplit(production_url).port or default_port
    except ValueError:
        return default_port


class _LlamaCppFamily:
    """What the kinds speaking llama.cpp's HTTP API share: watched through /health and /slots,
    chatted with over the OpenAI-compatible API, a GGUF file for a model."""

    name = ""
    default_port = 0
    process_names: tuple[str, ...] = ()
    calibrates_this_package = False
    counts_prompts = True

    @property
    def default_production_url(self) -> str:
        return default_production_url(self.name)

    def production_port(self, production_url: str | None) -> int:
        return port_of(production_url, self.default_port)

    def watch(self, base_url: str) -> ProductionWatch:
        from .production import LlamaServerWatch

        return LlamaServerWatch(base_url)

    def chat_client(self, base_url: str, model: str) -> ChatClient:
        from .openai_api import OpenAIChatClient

        return OpenAIChatClient(base_url, runner_name=self.name)

    def model_file_bytes(self, config: LocalModels) -> int | None:
        from ..errors import RunnerNotFound
        from .models import resolve_gguf

        try:
            return resolve_gguf(config.model).stat().st_size
        except (RunnerNotFound, OSError):
            return None  # starting the runner says what is wrong with the model

    def _serve_again(self, config: LocalModels) -> RunnerParallelism:
        """This package's `runner serve` is how production of this kind is restarted."""
        from ..platforms.parallelism import ManualParallelism

        port = self.production_port(config.production)
        model = config.model
        return ManualParallelism(
            lambda n, w: f"restart the {self.name} runner with {n} slot(s) of {w} tokens",
            lambda n, w: (
                "vibey-gh",
                "runner",
                "serve",
                "--runner",
                self.name,
                "--slots",
                str(n),
                "--window",
                str(w),
                "--port",
                str(port),
                *(("--model", model) if model != "default" else ()),
            ),
        )


class EmbeddedKind(_LlamaCppFamily):
    """llama.cpp inside this package (xllamacpp), served by `vibey-gh runner serve`."""

    name = "embedded"
    default_port = DEFAULT_PORTS[name]
    process_names = ("vibey_gh.runners.embedded",)
    calibrates_this_package = True

    def identify_production(
        self,
        config: LocalModels,
        state: StateLayout | None = None,
        read_environment: EnvironmentReader | None = None,
    ) -> RunnerInfo:
        from .identify import identify_embedded

        return identify_embedded(config, state)

    def parallelism(self, config: LocalModels, probes: PlatformProbes) -> RunnerParallelism:
        return self._serve_again(config)

    def calibration_runner(
        self,
        state: StateLayout | None = None,
        config: LocalModels | None = None,
        simulated: SimulatedModel | None = None,
    ) -> Runner:
        from .embedded import EmbeddedRunner

        return EmbeddedRunner(state)


class LlamaServerKind(_LlamaCppFamily):
    """llama.cpp's own server binary, from the config or PATH."""

    name = "llama-server"
    default_port = DEFAULT_PORTS[name]
    process_names = ("llama-server",)

    def identify_production(
        self,
        config: LocalModels,
        state: StateLayout | None = None,
        read_environment: EnvironmentReader | None = None,
    ) -> RunnerInfo:
        from .identify import identify_llama_server

        return identify_llama_server(config, state)

    def parallelism(self, config: LocalModels, probes: PlatformProbes) -> RunnerParallelism:
        from ..errors import RunnerNotFound
        from ..platforms.parallelism import ManualParallelism
        from .models import resolve_gguf

        port = self.production_port(config.production)
        binary = config.runner_binary or "llama-server"
        try:
            model = str(resolve_gguf(config.model))
        except RunnerNotFound:
            model = config.model
        return ManualParallelism(
            lambda n, w: (
                f"restart llama-server with {n} slot(s) of {w} tokens (-c is the total, {n} x {w})"
            ),
            lambda n, w: (
                binary,
                "-m",
                model,
                "-np",
                str(n),
                "-c",
                str(n * w),
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                # production's own settings, as measured: leaving them out would restart it
                # unlike the runner the evidence is about
                *config.runner_args,
            ),
        )

    def calibration_runner(
        self,
        state: StateLayout | None = None,
        config: LocalModels | None = None,
        simulated: SimulatedModel | None = None,
    ) -> Runner:
        from .llama_server import LlamaServerRunner

        return LlamaServerRunner(state, runner_args=config.runner_args if config else ())


class SimulatedKind(_LlamaCppFamily):
    """llama-server's API over a capacity model, served by this package."""

    name = "simulated"
    default_port = DEFAULT_PORTS[name]
    process_names = ("vibey_gh.runners.simulated_server",)
    calibrates_this_package = True

    def identify_production(
        self,
        config: LocalModels,
        state: StateLayout | None = None,
        read_environment: EnvironmentReader | None = None,
    ) -> RunnerInfo:
        from .simulated_model import simulated_identity

        return simulated_identity(config.simulated)

    def parallelism(self, config: LocalModels, probes: PlatformProbes) -> RunnerParallelism:
        return self._serve_again(config)

    def calibration_runner(
        self,
        state: StateLayout | None = None,
        config: LocalModels | None = None,
        simulated: SimulatedModel | None = None,
    ) -> Runner:
        from .simulated import SimulatedRunner

        return SimulatedRunner(simulated or (config.simulated if config else None), state)


class OllamaKind:
    """Ollama: watched through /api/ps, chatted with over /api/chat, models by name."""

    name = "ollama"
    default_port = DEFAULT_PORTS[name]
    process_names = ("ollama",)
    calibrates_this_package = False
    counts_prompts = False

    @property
    def default_production_url(self) -> str:
        return default_production_url(self.name)

    def production_port(self, production_url: str | None) -> int:
        return port_of(production_url, self.default_port)

    def identify_production(
        self,
        config: LocalModels,
        state: StateLayout | None = None,
        read_environment: EnvironmentReader | None = None,
    ) -> RunnerInfo:
        from .identify import identify_ollama_production

        return identify_ollama_production(config, read_environment)

    def watch(self, base_url: str) -> ProductionWatch:
        from .production import OllamaWatch

        return OllamaWatch(base_url)

    def parallelism(self, config: LocalModels, probes: PlatformProbes) -> RunnerParallelism:
        # the Ollama service's environment: the macOS app, a systemd unit, else a note; with
        # the configured runner_env's capacity variables, which the evidence was measured with
        from .settings import measured_variables

        return probes.service_parallelism(measured_variables(config.runner_env or {}))

    def calibration_runner(
        self,
        state: StateLayout | None = None,
        config: LocalModels | None = None,
        simulated: SimulatedModel | None = None,
    ) -> Runner:
        from .ollama import OllamaRunner
        from .settings import production_settings

        settings = production_settings(config) if config is not None else None
        return OllamaRunner(settings=settings)

    def chat_client(self, base_url: str, model: str) -> ChatClient:
        from .ollama import OllamaChatClient

        return OllamaChatClient(base_url, model)

    def model_file_bytes(self, config: LocalModels) -> int | None:
        """None: Ollama's named models are placed by Ollama itself (and unloaded when idle)."""
        return None
