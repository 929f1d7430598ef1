"""The runner seams, in one place: what a runner kind is, what its servers and clients do, and
what a kind reads of the configuration.

A kind (each folder beside this module: `llamacpp/`, `ollama/`, `simulated/`) is one object that
says where its production listens by default, which processes it runs as, who production is,
how to watch it, how to set its parallelism, how to start a calibration runner of its own, how
to speak its chat format, what its log lines mean and which of production's settings its
evidence is keyed to. `registry` names the kinds; code outside `runners/` asks the kind object
and never compares a kind's name.

A kind subclasses `RunnerKind`: the members without a body here are the ones every kind says
for itself; the others have the answer of a kind that has nothing to say (no settings of its
own, no drift, no separate binary), which a kind overrides where it has.

The data that crosses these seams and that code below `runners/` needs too (ChatSettings,
RunnerLaunch, ProductionState, RunnerParallelism) lives in `interfaces.slots_interface`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable
from urllib.parse import urlsplit

import msgspec
from msgspec import field

from ..errors import RunnerError
from .http.wire import Messages as Messages
from .http.wire import ToolSpecs

if TYPE_CHECKING:
    from ..interfaces.identity import RunnerInfo
    from ..interfaces.prompt_count import PromptCounter
    from ..interfaces.slots_interface import (
        ChatSettings,
        ProductionState,
        RunnerLaunch,
        RunnerParallelism,
        TurnResult,
    )
    from ..platforms.device.probes import PlatformProbes
    from ..state import StateLayout
    from .log_patterns import LogPattern

# One turn: messages and tools in OpenAI's format (what corpora and lane records hold).
Tools = ToolSpecs


class RunnerConfig(Protocol):
    """What a runner kind reads of `[local_models]` (the config's `LocalModels` is one)."""

    @property
    def runner(self) -> str: ...
    @property
    def model(self) -> str: ...
    @property
    def window(self) -> int: ...
    @property
    def concurrent_runs(self) -> int | str: ...
    @property
    def production(self) -> str: ...
    @property
    def calibration_port(self) -> int: ...
    @property
    def runner_binary(self) -> str | None: ...
    @property
    def runner_args(self) -> tuple[str, ...]: ...
    @property
    def runner_env(self) -> dict[str, str] | None: ...


class ProductionSettings(msgspec.Struct, frozen=True):
    """Production's own settings as its kind reads them. fingerprinted: the settings evidence
    is keyed to (empty for none). environment: every production variable that was read or
    configured. source: where they came from. missing: why they could not be read (None when
    they could, or were configured). serving_slots: the slots production serves by these
    settings, where they say (None: unknown)."""

    fingerprinted: dict[str, str] = field(default_factory=dict)
    environment: dict[str, str] = field(default_factory=dict)
    source: str = ""
    missing: str | None = None
    serving_slots: int | None = None


# Reads production's service environment: the names asked for -> (values, source, missing).
EnvironmentReader = Callable[[tuple[str, ...]], tuple[dict[str, str], str, str | None]]


class ChatTurns(Protocol):
    """One request per turn in the runner's own wire format."""

    def chat(self, messages: Messages, tools: Tools, settings: ChatSettings) -> TurnResult: ...


class ChatClient(ChatTurns, Protocol):
    """A kind's chat client, and a close. The lanes' production client and the calibration
    runner's turns both go through the kind's one client."""

    def close(self) -> None: ...


@runtime_checkable
class RunningRunner(ChatTurns, Protocol):
    """A started runner.

    Lifecycle: Runner.start() -> wait_ready() -> preload() -> chat()* -> stop().
    """

    base_url: str
    log_path: Path

    @property
    def pid(self) -> int | None: ...

    @property
    def argv(self) -> tuple[str, ...] | None:
        """The command line it was started with (None: no process of its own). The pid record
        holds this, not what the process shows: a child caught mid-exec shows nothing yet."""
        ...

    def wait_ready(self, timeout_s: float = 120.0) -> None: ...

    def preload(self) -> float:
        """Load the model before the clock starts; return the seconds it took."""
        ...

    def info(self) -> RunnerInfo: ...

    def stop(self) -> None: ...


class Runner(Protocol):
    """A runner kind that can start a server of its own (the calibration runner)."""

    kind: str

    def start(self, launch: RunnerLaunch) -> RunningRunner: ...


class ProductionWatch(Protocol):
    def poll(self) -> ProductionState: ...


OK, WARN, FAIL = "ok", "warn", "fail"


class Check(msgspec.Struct, frozen=True):
    """One thing calibrate needs: `status` ok, warn (calibrate runs, but read this) or fail
    (calibrate would stop here); `todo` says what to do when it is not ok."""

    name: str
    status: str
    detail: str
    todo: str | None = None


def port_of(production_url: str | None, default_port: int) -> int:
    """The port `production_url` names, else `default_port`."""
    if not production_url:
        return default_port
    try:
        return urlsplit(production_url).port or default_port
    except ValueError:
        return default_port


class RunnerKind(Protocol):
    """One runner kind (see the module's note).

    name: the kind's name in the config (`local_models.runner`) and on the command line.
    default_port: where its production listens when production_url names no port.
    process_names: what its production process's name or command line holds (to find
      production's process tree when its sockets are not readable).
    calibrates_this_package: its calibration runner is this installed package itself (so
      production's version is its own, and a runner left on the calibration port is ours).
    counts_prompts: its calibration runner counts a prompt's tokens (llama.cpp's
      `/apply-template` and `/tokenize`): `prompt_counter` starts one to count.
    """

    name: str
    default_port: int
    process_names: tuple[str, ...]
    calibrates_this_package: bool = False
    counts_prompts: bool = False

    # --- what every kind says for itself ---------------------------------------------------

    def identify_production(
        self,
        config: RunnerConfig,
        state: StateLayout | None = None,
        read_environment: EnvironmentReader | None = None,
    ) -> RunnerInfo:
        """Kind, version, model digest and settings of production, starting nothing
        (`read_environment`: where production's service environment is read)."""
        ...

    def watch(self, base_url: str) -> ProductionWatch:
        """What the runner of this kind at `base_url` holds or is busy with, polled."""
        ...

    def parallelism(self, config: RunnerConfig, probes: PlatformProbes) -> RunnerParallelism:
        """How to give production N slots of W tokens (`slots apply`) on `probes`' platform."""
        ...

    def calibration_runner(
        self,
        state: StateLayout | None = None,
        config: RunnerConfig | None = None,
    ) -> Runner:
        """The Runner that starts calibration servers of this kind with `config`'s production
        settings (a kind with settings of its own reads them from `config` too)."""
        ...

    def chat_client(self, base_url: str, model: str) -> ChatClient:
        """The chat client of a runner of this kind at `base_url`."""
        ...

    def log_patterns(self) -> tuple[LogPattern, ...]:
        """The table its logs are read with (`logscan`)."""
        ...

    def model_check(self, config: RunnerConfig, production: RunnerInfo | None) -> Check:
        """Whether the model the calibration runner loads is there (`doctor`, `calibrate`)."""
        ...

    # --- what a kind with nothing of its own to say answers ---------------------------------

    @property
    def default_production_url(self) -> str:
        """production_url when the config gives none."""
        return f"http://127.0.0.1:{self.default_port}"

    def production_port(self, production_url: str | None) -> int:
        """The port of `production_url`, or the default port where it names none."""
        return port_of(production_url, self.default_port)

    def model_file_bytes(self, config: RunnerConfig) -> int | None:
        """The size of the calibration runner's model file; None where there is none to size."""
        return None

    def production_settings(
        self, config: RunnerConfig, read_environment: EnvironmentReader | None = None
    ) -> ProductionSettings:
        """Production's own settings that the calibration runner mirrors and the fingerprint
        holds."""
        return ProductionSettings()

    def measured_settings(
        self, measured: Mapping[str, object], read_environment: EnvironmentReader | None = None
    ) -> dict[str, object]:
        """The config changes that give production back the settings the evidence recorded
        (`measured`, its fingerprint's `runner_settings`), for `slots apply`; Refused when
        production runs with a setting apply cannot undo."""
        return {}

    def production_drift(self, config: RunnerConfig) -> list[str]:
        """Where production shows its own settings, what differs from the config, as short
        phrases; nothing when it does not say."""
        return []

    def installed_check(self) -> Check | None:
        """Whether the calibration runner this package starts can run here; None where the
        calibration runner is a binary of its own (`calibration_version` says)."""
        return None

    def calibration_version(
        self, config: RunnerConfig, environ: Mapping[str, str] | None = None
    ) -> tuple[str, str | None]:
        """A separate calibration binary's path and version (None: its --version names none),
        reading no model. Asked only of kinds that do not calibrate this package."""
        raise RunnerError(f"the {self.name} runner is this package, not a binary of its own")

    def prompt_counter(
        self, config: RunnerConfig, state: StateLayout
    ) -> AbstractContextManager[PromptCounter]:
        """Its calibration runner with `config`, started to count a prompt's tokens and stopped
        when the context ends (`slots corpus --fill-window`). Asked only of a kind that
        `counts_prompts`."""
        raise RunnerError(f"the {self.name} runner has no tokenizer to ask")

    def identify_calibration(
        self,
        config: RunnerConfig,
        state: StateLayout | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> RunnerInfo:
        """The calibration runner's identity from its binary and model store, starting no
        server: for a kind that calibrates this package, production's own."""
        return self.identify_production(config, state)
