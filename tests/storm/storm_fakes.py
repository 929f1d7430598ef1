"""Fakes for storm tests: a production client, an `allowed`, a calibration."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from vibey_gh.clock import SYSTEM_CLOCK
from vibey_gh.config import LocalModels
from vibey_gh.interfaces.slots_interface import ChatSettings, ToolCall, TurnResult
from vibey_gh.slots.gate.allowed import AllowedAnswer
from vibey_gh.slots.measurement.calibration_setup import CalibrationOutcome
from vibey_gh.state import StateLayout
from vibey_gh.storm.calibration import IdleRun
from vibey_gh.storm.setup import StormDeps


class FakeProduction:
    """Every lane reads one file, then answers. `on_request` runs before each answer."""

    def __init__(self, on_request: Callable[[list[dict[str, Any]]], None] | None = None) -> None:
        self.on_request = on_request
        self.requests = 0
        self._lock = threading.Lock()

    def client(self, config: LocalModels) -> FakeClient:
        return FakeClient(self)


class FakeClient:
    def __init__(self, production: FakeProduction) -> None:
        self.production = production

    def chat(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        settings: ChatSettings,
    ) -> TurnResult:
        with self.production._lock:
            self.production.requests += 1
        if self.production.on_request is not None:
            self.production.on_request(messages)
        if len(messages) == 2:
            call = ToolCall("read_file", {"path": "a.py"})
            return TurnResult(200, "tool_calls", 200, 9, "", (call,), 0.0, 0.1, None)
        return TurnResult(200, "stop", 300, 4, "It returns 1.", (), 0.0, 0.1, None)

    def close(self) -> None:
        return None


class FakeAllowed:
    def __init__(self, allowed: int, reason: str = "unmeasured: no evidence") -> None:
        self.allowed = allowed
        self.reason = reason
        self.calls = 0
        self.production_slots: int | None = None

    def __call__(self, config: LocalModels) -> AllowedAnswer:
        self.calls += 1
        return AllowedAnswer(
            self.allowed,
            self.reason,
            "f" * 16,
            None,
            False,
            "measured",
            production_slots=self.production_slots,
        )


class FakeCalibration:
    def __init__(self, error: Exception | None = None) -> None:
        self.calls: list[tuple[Path, Path]] = []
        self.error = error

    def __call__(self, run: IdleRun) -> CalibrationOutcome:
        self.calls.append((run.records_root, run.done_folder))
        if self.error is not None:
            raise self.error
        return CalibrationOutcome("f" * 16, 1, "measured: one is the floor", True, True, None)


def make_queue(root: Path, count: int) -> Path:
    repo = root / "repo"
    repo.mkdir(parents=True, exist_ok=True)
    (repo / "a.py").write_text("def one():\n    return 1\n", encoding="utf-8")
    pending = root / "queue" / "pending"
    pending.mkdir(parents=True, exist_ok=True)
    for index in range(count):
        (pending / f"lane{index}.toml").write_text(
            f'id = "lane{index}"\ntitle = "Lane {index}"\ntask = "What does a.py return?"\n'
            f'repository = "../../repo"\nfiles = ["a.py"]\n',
            encoding="utf-8",
        )
    return root / "queue"


def deps(
    layout: StateLayout,
    allowed: FakeAllowed,
    production: FakeProduction,
    calibration: FakeCalibration | None = None,
    said: list[str] | None = None,
    config: LocalModels | None = None,
) -> StormDeps:
    return StormDeps(
        layout=layout,
        clock=SYSTEM_CLOCK,
        load_config=lambda: config or LocalModels(concurrent_runs="measured", window=4096),
        decide=allowed,
        client_for=production.client,
        calibrate=calibration or FakeCalibration(),
        echo=(said if said is not None else []).append,
    )
