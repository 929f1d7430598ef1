"""A runner kind made for the test of the "add a runner kind" recipe (docs/architecture.md).

Everything this kind knows is in this folder, as a real kind's is under `runners/<kind>/`:
its name, default port and process names, who production is, how it is watched, how its
parallelism is set, its calibration runner, its chat client and wire format, its log lines and
its model check. It answers every turn with the last message it was sent, at once.
"""

from __future__ import annotations

import hashlib
import time
from typing import TypedDict

from vibey_gh.interfaces.identity import RunnerInfo
from vibey_gh.interfaces.slots_interface import (
    ChatSettings,
    ProductionState,
    RunnerLaunch,
    RunnerParallelism,
    TurnResult,
)
from vibey_gh.platforms.device.probes import PlatformProbes
from vibey_gh.platforms.parallelism import ManualParallelism
from vibey_gh.runners.contract import (
    OK,
    ChatClient,
    Check,
    EnvironmentReader,
    Messages,
    ProductionWatch,
    Runner,
    RunnerConfig,
    RunnerKind,
    RunningRunner,
    Tools,
)
from vibey_gh.runners.log_patterns import LogPattern, pattern
from vibey_gh.state import StateLayout

NAME = "echo"
VERSION = "echo 1.0"


class EchoReply(TypedDict):
    """The echo runner's wire format: what it answers to a turn."""

    said: str
    tokens: int


def echo_reply(messages: Messages) -> EchoReply:
    said = str(messages[-1].get("content") or "") if messages else ""
    return {"said": said, "tokens": len(said.split())}


def turn_of(reply: EchoReply, started: float, ended: float) -> TurnResult:
    return TurnResult(200, "stop", None, reply["tokens"], reply["said"], (), started, ended, None)


class EchoClient:
    def chat(self, messages: Messages, tools: Tools, settings: ChatSettings) -> TurnResult:
        started = time.monotonic()
        return turn_of(echo_reply(messages), started, time.monotonic())

    def close(self) -> None:
        pass


class EchoRunning(EchoClient):
    def __init__(self, launch: RunnerLaunch) -> None:
        self.base_url = f"http://127.0.0.1:{launch.port}"
        self.log_path = launch.log_path
        self.model = launch.model
        launch.log_path.write_text(f"echo serving {launch.slots} slots\n", encoding="utf-8")

    @property
    def pid(self) -> int | None:
        return None

    @property
    def argv(self) -> tuple[str, ...] | None:
        return None

    def wait_ready(self, timeout_s: float = 120.0) -> None:
        pass

    def preload(self) -> float:
        return 0.0

    def info(self) -> RunnerInfo:
        return RunnerInfo(NAME, VERSION, self.model, None)

    def stop(self) -> None:
        pass


class EchoRunner:
    kind = NAME

    def start(self, launch: RunnerLaunch) -> RunningRunner:
        return EchoRunning(launch)


class EchoWatch:
    def poll(self) -> ProductionState:
        return ProductionState(reachable=True, busy=False, version=VERSION)


class EchoKind(RunnerKind):
    name = NAME
    default_port = 7777
    process_names = ("echo-runner",)

    def identify_production(
        self,
        config: RunnerConfig,
        state: StateLayout | None = None,
        read_environment: EnvironmentReader | None = None,
    ) -> RunnerInfo:
        digest = hashlib.sha256(config.model.encode()).hexdigest()
        return RunnerInfo(NAME, VERSION, config.model, digest)

    def watch(self, base_url: str) -> ProductionWatch:
        return EchoWatch()

    def parallelism(self, config: RunnerConfig, probes: PlatformProbes) -> RunnerParallelism:
        return ManualParallelism(lambda n, w: f"restart echo with {n} slot(s) of {w} tokens")

    def calibration_runner(
        self,
        state: StateLayout | None = None,
        config: RunnerConfig | None = None,
    ) -> Runner:
        return EchoRunner()

    def chat_client(self, base_url: str, model: str) -> ChatClient:
        return EchoClient()

    def log_patterns(self) -> tuple[LogPattern, ...]:
        return (pattern("echo-slots", "slots", r"echo serving (?P<n_slots>\d+) slots"),)

    def model_check(self, config: RunnerConfig, production: RunnerInfo | None) -> Check:
        return Check("model", OK, "the echo runner needs no model")


__all__ = ["NAME", "EchoKind"]
