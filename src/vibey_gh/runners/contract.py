"""What every runner kind knows: the one contract behind `registry.runner_kind(name)`.

A kind (embedded, llama-server, ollama, simulated) is one object that says where its production
listens by default, which processes it runs as, who production is, how to watch it, how to set
its parallelism, how to start a calibration runner of its own, and how to speak its chat format.
Code outside `runners/` asks the kind object and never compares a kind's name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ..config import LocalModels, SimulatedModel
    from ..interfaces.identity import RunnerInfo
    from ..interfaces.slots_interface import (
        ChatSettings,
        ProductionWatch,
        Runner,
        RunnerParallelism,
        TurnResult,
    )
    from ..platforms.probes import PlatformProbes
    from ..state import StateLayout
    from .settings import EnvironmentReader


class ChatClient(Protocol):
    """One request per turn in the runner's own wire format, and a close. The lanes' production
    client and the calibration runner's turns both go through the kind's one client."""

    def chat(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        settings: ChatSettings,
    ) -> TurnResult: ...

    def close(self) -> None: ...


class RunnerKind(Protocol):
    """One runner kind.

    name: the kind's name in the config (`local_models.runner`) and on the command line.
    default_port: where its production listens when production_url names no port.
    process_names: what its production process's name or command line holds (to find
      production's process tree when its sockets are not readable).
    calibrates_this_package: its calibration runner is this installed package itself (so
      production's version is its own, and a runner left on the calibration port is ours).
    counts_prompts: its calibration runner counts a prompt's tokens over HTTP (llama.cpp's
      `/apply-template` and `/tokenize`; Ollama has neither), for `runners.prompt_count`.
    """

    @property
    def name(self) -> str: ...

    @property
    def default_port(self) -> int: ...

    @property
    def process_names(self) -> tuple[str, ...]: ...

    @property
    def calibrates_this_package(self) -> bool: ...

    @property
    def counts_prompts(self) -> bool: ...

    @property
    def default_production_url(self) -> str:
        """production_url when the config gives none."""
        ...

    def production_port(self, production_url: str | None) -> int:
        """The port of `production_url`, or the default port where it names none."""
        ...

    def identify_production(
        self,
        config: LocalModels,
        state: StateLayout | None = None,
        read_environment: EnvironmentReader | None = None,
    ) -> RunnerInfo:
        """Kind, version, model digest and settings of production, starting nothing."""
        ...

    def watch(self, base_url: str) -> ProductionWatch:
        """What the runner of this kind at `base_url` holds or is busy with, polled."""
        ...

    def parallelism(self, config: LocalModels, probes: PlatformProbes) -> RunnerParallelism:
        """How to give production N slots of W tokens (`slots apply`) on `probes`' platform."""
        ...

    def calibration_runner(
        self,
        state: StateLayout | None = None,
        config: LocalModels | None = None,
        simulated: SimulatedModel | None = None,
    ) -> Runner:
        """The Runner that starts calibration servers of this kind with `config`'s production
        settings."""
        ...

    def chat_client(self, base_url: str, model: str) -> ChatClient:
        """The chat client of a runner of this kind at `base_url`."""
        ...

    def model_file_bytes(self, config: LocalModels) -> int | None:
        """The size of the calibration runner's model file; None where there is none to size."""
        ...
