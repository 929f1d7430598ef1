"""The llama.cpp kinds, embedded and llama-server, each one `contract.RunnerKind`; `registry`
names them. The simulated kind speaks the same API and builds on `LlamaCppFamily` too.

Light on purpose: the config and `slots allowed` read every kind on every call. What they read
(names, ports, settings) is imported here; who production is (`identify`, through `identity()`)
and everything else a kind does (servers, watches, chat clients over httpx, process handling,
through `serving()`) is loaded the first time it is asked.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

from ...errors import RunnerNotFound
from ..contract import FAIL, OK, Check, RunnerKind
from .settings import runner_args_settings

if TYPE_CHECKING:
    from ...interfaces.identity import RunnerInfo
    from ...interfaces.prompt_count import PromptCounter
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
    from .identify import LlamaCppIdentity
    from .serving import LlamaCppServing


def identity() -> LlamaCppIdentity:
    """Who a llama.cpp runner is: version, model digest, settings, slots served."""
    # lazy: a declared concurrent_runs reads the kinds' names and ports, never an identity
    from .identify import IDENTITY

    return IDENTITY


def serving() -> LlamaCppServing:
    """The family's servers, watches and chat clients."""
    # lazy: httpx, llama.cpp and process handling cost `slots allowed` more than its budget
    from .serving import SERVING

    return SERVING


# Where a production of this family listens when production_url names no port.
LLAMA_CPP_PORT = 8080


class LlamaCppFamily(RunnerKind):
    """What the kinds speaking llama.cpp's HTTP API share: watched through /health and /slots,
    chatted with over the OpenAI-compatible API, a GGUF file for a model, llama.cpp's log."""

    default_port = LLAMA_CPP_PORT
    counts_prompts = True  # /apply-template and /tokenize

    def identify_production(
        self,
        config: RunnerConfig,
        state: StateLayout | None = None,
        read_environment: EnvironmentReader | None = None,
    ) -> RunnerInfo:
        """A llama.cpp server runs with no service environment to read: each kind of the family
        says who its production (and its calibration runner) is from the config and the state
        alone."""
        return self.production_identity(config, state)

    def production_identity(self, config: RunnerConfig, state: StateLayout | None) -> RunnerInfo:
        """Kind, version, model digest and settings of production (`identify_production`)."""
        raise NotImplementedError

    def identify_calibration(
        self,
        config: RunnerConfig,
        state: StateLayout | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> RunnerInfo:
        return self.calibration_identity(config, state)

    def calibration_identity(self, config: RunnerConfig, state: StateLayout | None) -> RunnerInfo:
        """The calibration runner's identity, starting no server (`identify_calibration`):
        production's own where the calibration runner is this package."""
        return self.production_identity(config, state)

    def watch(self, base_url: str) -> ProductionWatch:
        return serving().watch(base_url)

    def chat_client(self, base_url: str, model: str) -> ChatClient:
        return serving().chat_client(base_url, self.name)

    def log_patterns(self) -> tuple[LogPattern, ...]:
        return serving().log_patterns()

    def prompt_counter(
        self, config: RunnerConfig, state: StateLayout
    ) -> AbstractContextManager[PromptCounter]:
        return serving().prompt_counter(self, config, state)

    def model_file_bytes(self, config: RunnerConfig) -> int | None:
        try:
            return identity().resolve_gguf(config.model).stat().st_size
        except (RunnerNotFound, OSError):
            return None  # starting the runner says what is wrong with the model

    def model_check(self, config: RunnerConfig, production: RunnerInfo | None) -> Check:
        try:
            path = identity().resolve_gguf(config.model)
        except RunnerNotFound as exc:
            return Check(
                "model",
                FAIL,
                str(exc),
                "set [local_models] model to a GGUF file "
                "(or `vibey-gh slots calibrate --model PATH`)",
            )
        return Check("model", OK, str(path))

    def parallelism(self, config: RunnerConfig, probes: PlatformProbes) -> RunnerParallelism:
        """This package's `runner serve` is how production of this kind is restarted (a kind
        with a server of its own, as llama-server, says its own command)."""
        port = self.production_port(config.production)
        return serving().serve_again(self.name, port, config.model)


class EmbeddedKind(LlamaCppFamily):
    """llama.cpp inside this package (xllamacpp), served by `vibey-gh runner serve`."""

    name = "embedded"
    # the runner's module; the second is where an earlier version of this package kept it, so
    # a production (or an orphan) started by that version is still recognised
    process_names = ("vibey_gh.runners.llamacpp.embedded", "vibey_gh.runners.embedded")
    calibrates_this_package = True

    def production_identity(self, config: RunnerConfig, state: StateLayout | None) -> RunnerInfo:
        return identity().identify_embedded(config, state)

    def calibration_identity(self, config: RunnerConfig, state: StateLayout | None) -> RunnerInfo:
        return identity().gguf_identity(config, identity().embedded_version(), state)

    def installed_check(self) -> Check | None:
        name = "calibration runner"
        if not serving().xllamacpp_installed():
            return Check(
                name,
                FAIL,
                "the embedded runner needs xllamacpp, which is not installed",
                "pip install 'vibey-gh[embedded]' (pipx: pipx inject vibey-gh xllamacpp)",
            )
        return Check(name, OK, "embedded llama.cpp (xllamacpp) installed")

    def calibration_runner(
        self,
        state: StateLayout | None = None,
        config: RunnerConfig | None = None,
    ) -> Runner:
        return serving().embedded_runner(state)


class LlamaServerKind(LlamaCppFamily):
    """llama.cpp's own server binary, from the config or PATH."""

    name = "llama-server"
    process_names = ("llama-server",)

    def production_identity(self, config: RunnerConfig, state: StateLayout | None) -> RunnerInfo:
        return identity().identify_llama_server(config, state)

    def production_settings(
        self, config: RunnerConfig, read_environment: EnvironmentReader | None = None
    ) -> ProductionSettings:
        return runner_args_settings(config.runner_args)

    def measured_settings(
        self, measured: Mapping[str, object], read_environment: EnvironmentReader | None = None
    ) -> dict[str, object]:
        return serving().measured_runner_args(measured)

    def production_drift(self, config: RunnerConfig) -> list[str]:
        return identity().production_drift(config)

    def calibration_version(
        self, config: RunnerConfig, environ: Mapping[str, str] | None = None
    ) -> tuple[str, str | None]:
        return serving().llama_server_version(self.name, config)

    def calibration_identity(self, config: RunnerConfig, state: StateLayout | None) -> RunnerInfo:
        binary, version = self.calibration_version(config)
        info = identity().gguf_identity(config, version, state, self.production_settings(config))
        if version is None:
            info.missing["version"] = f"`{binary} --version` did not name a build"
        return info

    def parallelism(self, config: RunnerConfig, probes: PlatformProbes) -> RunnerParallelism:
        return serving().restart_llama_server(config, self.production_port(config.production))

    def calibration_runner(
        self,
        state: StateLayout | None = None,
        config: RunnerConfig | None = None,
    ) -> Runner:
        return serving().llama_server_runner(state, config.runner_args if config else ())
