"""What the llama.cpp kinds do beyond saying who production is: start servers, watch and chat
with them, count prompts, say how production is restarted with other slots.

`kinds` loads this module the first time a calibration, a storm, a lane or doctor asks one of
these: `slots allowed` identifies production through `kinds` on every decision and never needs
a server, an httpx client or a process handle, which cost it far more than its budget.
"""

from __future__ import annotations

import importlib.util
import shlex
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager

from ...errors import BadInput, RunnerError, RunnerNotFound
from ...interfaces.prompt_count import PromptCounter
from ...interfaces.slots_interface import RunnerParallelism
from ...platforms.parallelism import ManualParallelism
from ...state import StateLayout
from ..builds import keyed_to_binary
from ..contract import ChatClient, ProductionWatch, Runner, RunnerConfig, RunnerKind
from ..http.openai_chat import OpenAIChatClient
from ..log_patterns import LogPattern
from ..process import find_executable, run_version_command
from .api.watch import LlamaServerWatch
from .embedded import EmbeddedRunner
from .identify import llama_server_version
from .llama_server import LlamaServerRunner
from .log_lines import LLAMA_CPP_PATTERNS
from .models import resolve_gguf
from .prompt_counter import runner_prompt_counter
from .settings import RUNNER_ARGS_KEY


class LlamaCppServing:
    """The llama.cpp family's servers, watches, chat clients and restart commands."""

    def xllamacpp_installed(self) -> bool:
        """Whether the embedded runner's extra is installed (it is not imported to say so)."""
        return importlib.util.find_spec("xllamacpp") is not None

    def watch(self, base_url: str) -> ProductionWatch:
        return LlamaServerWatch(base_url)

    def chat_client(self, base_url: str, runner_name: str) -> ChatClient:
        return OpenAIChatClient(base_url, runner_name=runner_name)

    def log_patterns(self) -> tuple[LogPattern, ...]:
        return LLAMA_CPP_PATTERNS

    def prompt_counter(
        self, kind: RunnerKind, config: RunnerConfig, state: StateLayout
    ) -> AbstractContextManager[PromptCounter]:
        return runner_prompt_counter(kind, config, state)

    def embedded_runner(self, state: StateLayout | None) -> Runner:
        return EmbeddedRunner(state)

    def llama_server_runner(
        self, state: StateLayout | None, runner_args: tuple[str, ...]
    ) -> Runner:
        return LlamaServerRunner(state, runner_args=runner_args)

    def llama_server_version(self, kind_name: str, config: RunnerConfig) -> tuple[str, str | None]:
        """The llama-server binary's path and its build, keyed to the binary when it names
        none; its runner_args checked by the binary itself."""
        binary = find_executable(config.runner_binary, kind_name)
        version = llama_server_version(check_runner_args(binary, config.runner_args))
        return binary, keyed_to_binary(version, binary)

    def serve_again(self, kind_name: str, port: int, model: str) -> RunnerParallelism:
        """This package's `runner serve` is how production of an embedded or simulated kind is
        restarted."""
        return ManualParallelism(
            lambda n, w: f"restart the {kind_name} runner with {n} slot(s) of {w} tokens",
            lambda n, w: (
                "vibey-gh",
                "runner",
                "serve",
                "--runner",
                kind_name,
                "--slots",
                str(n),
                "--window",
                str(w),
                "--port",
                str(port),
                *(("--model", model) if model != "default" else ()),
            ),
        )

    def measured_runner_args(self, measured: Mapping[str, object]) -> dict[str, object]:
        """The config change that restarts production with the runner_args evidence recorded."""
        return {"runner_args": tuple(shlex.split(str(measured.get(RUNNER_ARGS_KEY, ""))))}

    def restart_llama_server(self, config: RunnerConfig, port: int) -> RunnerParallelism:
        """llama-server restarted by hand with other slots, production's own runner_args kept."""
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


SERVING = LlamaCppServing()


def check_runner_args(binary: str, runner_args: Sequence[str]) -> str:
    """Run `llama-server RUNNER_ARGS --version`: llama-server parses its arguments in order, so
    an unknown flag or a bad value is refused before --version prints. The output, or BadInput
    with llama-server's own complaint."""
    argv = [binary, *runner_args, "--version"]
    try:
        return run_version_command(argv)
    except RunnerError as exc:
        if not runner_args:
            raise
        raise BadInput(f"runner_args: llama-server refuses them: {exc}") from None
