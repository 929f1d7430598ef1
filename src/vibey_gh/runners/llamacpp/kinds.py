"""The llama.cpp kinds, embedded and llama-server, each one `contract.RunnerKind`; `registry`
names them. The simulated kind speaks the same API and builds on `LlamaCppFamily` too.

Light on purpose: `slots allowed` identifies production through these on every decision, so
every adapter (httpx, llama.cpp, process handling) is imported inside the method that needs it.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

from ..contract import OK, Check, RunnerKind

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
        from .api.watch import LlamaServerWatch

        return LlamaServerWatch(base_url)

    def chat_client(self, base_url: str, model: str) -> ChatClient:
        from ..http.openai_chat import OpenAIChatClient

        return OpenAIChatClient(base_url, runner_name=self.name)

    def log_patterns(self) -> tuple[LogPattern, ...]:
        from .log_lines import LLAMA_CPP_PATTERNS

        return LLAMA_CPP_PATTERNS

    def prompt_counter(
        self, config: RunnerConfig, state: StateLayout
    ) -> AbstractContextManager[PromptCounter]:
        from .prompt_counter import runner_prompt_counter

        return runner_prompt_counter(self, config, state)

    def model_file_bytes(self, config: RunnerConfig) -> int | None:
        from ...errors import RunnerNotFound
        from .models import resolve_gguf

        try:
            return resolve_gguf(config.model).stat().st_size
        except (RunnerNotFound, OSError):
            return None  # starting the runner says what is wrong with the model

    def model_check(self, config: RunnerConfig, production: RunnerInfo | None) -> Check:
        from ...errors import RunnerNotFound
        from ..contract import FAIL
        from .models import resolve_gguf

        try:
            path = resolve_gguf(config.model)
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
        from ...platforms.parallelism import ManualParallelism

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


class EmbeddedKind(LlamaCppFamily):
    """llama.cpp inside this package (xllamacpp), served by `vibey-gh runner serve`."""

    name = "embedded"
    # the runner's module; the second is where an earlier version of this package kept it, so
    # a production (or an orphan) started by that version is still recognised
    process_names = ("vibey_gh.runners.llamacpp.embedded", "vibey_gh.runners.embedded")
    calibrates_this_package = True

    def production_identity(self, config: RunnerConfig, state: StateLayout | None) -> RunnerInfo:
        from .identify import identify_embedded

        return identify_embedded(config, state)

    def calibration_identity(self, config: RunnerConfig, state: StateLayout | None) -> RunnerInfo:
        from .identify import gguf_identity
        from .models import embedded_version

        return gguf_identity(config, embedded_version(), state)

    def installed_check(self) -> Check | None:
        import importlib.util

        from ..contract import FAIL

        name = "calibration runner"
        if importlib.util.find_spec("xllamacpp") is None:
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
        from .embedded import EmbeddedRunner

        return EmbeddedRunner(state)


class LlamaServerKind(LlamaCppFamily):
    """llama.cpp's own server binary, from the config or PATH."""

    name = "llama-server"
    process_names = ("llama-server",)

    def production_identity(self, config: RunnerConfig, state: StateLayout | None) -> RunnerInfo:
        from .identify import identify_llama_server

        return identify_llama_server(config, state)

    def production_settings(
        self, config: RunnerConfig, read_environment: EnvironmentReader | None = None
    ) -> ProductionSettings:
        from .settings import runner_args_settings

        return runner_args_settings(config.runner_args)

    def measured_settings(
        self, measured: Mapping[str, object], read_environment: EnvironmentReader | None = None
    ) -> dict[str, object]:
        from .settings import measured_runner_args

        return measured_runner_args(measured)

    def production_drift(self, config: RunnerConfig) -> list[str]:
        from .drift import production_drift

        return production_drift(config)

    def calibration_version(
        self, config: RunnerConfig, environ: Mapping[str, str] | None = None
    ) -> tuple[str, str | None]:
        from ..process import find_executable
        from .identify import check_runner_args, keyed_to_binary, llama_server_version

        binary = find_executable(config.runner_binary, self.name)
        version = llama_server_version(check_runner_args(binary, config.runner_args))
        return binary, keyed_to_binary(version, binary)

    def calibration_identity(self, config: RunnerConfig, state: StateLayout | None) -> RunnerInfo:
        from .identify import gguf_identity

        binary, version = self.calibration_version(config)
        info = gguf_identity(config, version, state, self.production_settings(config))
        if version is None:
            info.missing["version"] = f"`{binary} --version` did not name a build"
        return info

    def parallelism(self, config: RunnerConfig, probes: PlatformProbes) -> RunnerParallelism:
        from ...errors import RunnerNotFound
        from ...platforms.parallelism import ManualParallelism
        from .models import resolve_gguf

        port = self.production_port(config.production)
        binary = config.runner_binary or self.name
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
        config: RunnerConfig | None = None,
    ) -> Runner:
        from .llama_server import LlamaServerRunner

        return LlamaServerRunner(state, runner_args=config.runner_args if config else ())
