"""One lane: an agent run against the production runner, recorded as it goes.

The lane opens with the system prompt and the plan (`lanes.plan`), offers the two read-only
tools, and sends the whole message list every turn. A turn that answers in plain text ends the
lane; a turn with tool calls gets each call run by the root-confined executor
(`lanes.sandbox`) and its result appended, and the next turn is sent. The lane ends after
`max_turns` turns without an answer.

A malformed tool call — Ollama's HTTP 500 "error parsing tool call", or arguments that are not
a JSON object — is sent again, up to `retries` times, and every retry is counted and recorded.
Requests are deterministic (temperature 0, seed 42), so a retry gives the runner's batching,
not the sampler, a second chance.

Tool-call ids are the ones the corpus gives (`call_` + the first 8 hex of sha256 of the spec
id and the turn the result appears in), so a lane that follows its plan sends the very turns
`slots corpus --specs` builds for it.
"""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path
from typing import Any

import msgspec
from msgspec import field

from ..clock import SYSTEM_CLOCK, Clock
from ..config import LocalModels
from ..errors import BadInput
from ..interfaces.schema import as_json
from ..interfaces.slots_interface import ChatSettings, ToolCall, TurnResult
from .client import ChatClient, runner_description
from .plan import opening_messages
from .records import LaneRecorder, new_run_id
from .sandbox import ToolExecutor
from .specs import LaneSpec
from .tools import tool_call_message, tool_definitions, tool_result_message

DEFAULT_MAX_TURNS = 32
DEFAULT_RETRIES = 2
MALFORMED_MARKER = "error parsing tool call"
UNPARSED_KEY = "_unparsed"


class LaneOptions(msgspec.Struct, frozen=True):
    max_turns: int = DEFAULT_MAX_TURNS
    retries: int = DEFAULT_RETRIES

    def __post_init__(self) -> None:
        if self.max_turns < 1:
            raise BadInput(f"--max-turns must be at least 1, not {self.max_turns}")
        if self.retries < 0:
            raise BadInput(f"--retries must be 0 or more, not {self.retries}")


# What a lane record's end event says of its outcome, in this order (the record itself is
# the run, the spec and the path).
END_EVENT_FIELDS = (
    "status",
    "answer",
    "turns",
    "retries",
    "tool_calls",
    "refused_tools",
    "error",
    "duration_s",
)


class LaneOutcome(msgspec.Struct, frozen=True):
    """How a lane ended. `status` is one of records.END_STATUSES; `turns` counts requests
    that were answered (retries not included); `record` is its events.jsonl."""

    run_id: str
    spec_id: str = field(name="spec")  # written as "spec", as lane records name it
    status: str
    answer: str
    turns: int
    retries: int
    tool_calls: int
    refused_tools: int
    record: Path
    duration_s: float
    error: str | None = None
    prompt_tokens: list[int | None] = field(default_factory=list)

    def summary(self) -> str:
        """One line: how the lane ended, what it did, and why where it failed."""
        said = (
            f"lane {self.run_id}: {self.status} after {self.turns} turns, "
            f"{self.tool_calls} tool calls, {self.retries} retries"
        )
        if self.refused_tools:
            said += f", {self.refused_tools} refused"
        return said + (f" ({self.error})" if self.error else "")

    @property
    def finished(self) -> bool:
        """Ran to its end (answered or out of turns): running it again would repeat it."""
        return self.status in ("answered", "max_turns")


def is_malformed(result: TurnResult) -> bool:
    """A tool call the runner or the model garbled: worth sending again."""
    if result.error and MALFORMED_MARKER in result.error.lower():
        return True
    return any(UNPARSED_KEY in call.arguments for call in result.tool_calls)


def call_id(spec_id: str, result_turn: int, position: int) -> str:
    """The corpus's id for the call whose result first appears in turn `result_turn`; a second
    call in the same turn gets its position mixed in."""
    key = f"{spec_id}\0{result_turn}" + (f"\0{position}" if position else "")
    return "call_" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:8]


def assistant_message(text: str, calls: list[tuple[str, ToolCall]]) -> dict[str, Any]:
    """The assistant message that makes `calls` (in the form `lanes.tools` writes one call)."""
    first_id, first = calls[0]
    message = tool_call_message(first_id, first.name, first.arguments)
    for extra_id, extra in calls[1:]:
        message["tool_calls"].extend(
            tool_call_message(extra_id, extra.name, extra.arguments)["tool_calls"]
        )
    message["content"] = text
    return message


class _Lane:
    def __init__(
        self,
        spec: LaneSpec,
        client: ChatClient,
        settings: ChatSettings,
        recorder: LaneRecorder,
        options: LaneOptions,
        executor: ToolExecutor | None,
        stop: threading.Event | None,
        clock: Clock,
    ) -> None:
        self.spec, self.client, self.settings = spec, client, settings
        self.recorder, self.options, self.executor = recorder, options, executor
        self.stop, self.clock = stop, clock
        self.turns = self.retries = self.tool_calls = self.refused = 0
        self.prompt_tokens: list[int | None] = []
        self.started = clock.monotonic()

    def finish(self, status: str, answer: str = "", error: str | None = None) -> LaneOutcome:
        outcome = LaneOutcome(
            run_id=self.recorder.run_id,
            spec_id=self.spec.id,
            status=status,
            answer=answer,
            turns=self.turns,
            retries=self.retries,
            tool_calls=self.tool_calls,
            refused_tools=self.refused,
            record=self.recorder.path,
            duration_s=self.clock.monotonic() - self.started,
            error=error,
            prompt_tokens=self.prompt_tokens,
        )
        self.recorder.end(**{name: getattr(outcome, name) for name in END_EVENT_FIELDS})
        return outcome

    def stopping(self) -> bool:
        return self.stop is not None and self.stop.is_set()

    def ask(
        self, index: int, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
    ) -> tuple[TurnResult, bool] | None:
        """Send turn `index`, again while the answer is malformed and retries are left.
        None when a stop was requested before a retry."""
        attempt = 0
        while True:
            attempt += 1
            self.recorder.turn(index, attempt, messages, tools)
            result = self.client.chat(list(messages), tools, self.settings)
            malformed = is_malformed(result)
            self.recorder.reply(index, attempt, result, malformed)
            if not malformed or attempt > self.options.retries:
                return result, malformed
            if self.stopping():
                return None
            self.retries += 1

    def run(self) -> LaneOutcome:
        tools = tool_definitions()
        messages = opening_messages(self.spec)
        for index in range(self.options.max_turns):
            if self.stopping():
                return self.finish("interrupted", error=f"stopped before turn {index}")
            asked = self.ask(index, messages, tools)
            if asked is None:
                return self.finish("interrupted", error=f"stopped while retrying turn {index}")
            result, malformed = asked
            if not result.served and self.stopping():  # the storm cancelled the turn in flight
                reason = result.error or f"finish reason {result.finish_reason!r}"
                return self.finish(
                    "interrupted", error=f"stopped during turn {index}, which ended: {reason}"
                )
            self.turns += 1
            self.prompt_tokens.append(result.prompt_tokens)
            if malformed:
                detail = result.error or "tool arguments that are not a JSON object"
                return self.finish(
                    "failed",
                    error=f"turn {index}: malformed tool call after "
                    f"{self.options.retries} retries ({detail})",
                )
            if not result.served:
                reason = result.error or f"finish reason {result.finish_reason!r}"
                return self.finish("failed", error=f"turn {index}: {reason}")
            if not result.tool_calls:
                return self.finish("answered", answer=result.text)
            calls = [
                (call_id(self.spec.id, index + 1, position), call)
                for position, call in enumerate(result.tool_calls)
            ]
            messages.append(assistant_message(result.text, calls))
            assert self.executor is not None
            for identifier, call in calls:
                outcome = self.executor.execute(call.name, call.arguments)
                self.tool_calls += 1
                self.refused += int(outcome.refused)
                self.recorder.tool(
                    index,
                    identifier,
                    call.name,
                    dict(call.arguments),
                    outcome.text,
                    outcome.refused,
                )
                messages.append(tool_result_message(identifier, call.name, outcome.text))
        return self.finish(
            "max_turns", error=f"no plain answer within {self.options.max_turns} turns"
        )


def check_repository(spec: LaneSpec) -> ToolExecutor:
    """The executor over the spec's repository; BadInput when the folder is missing."""
    if not spec.repository.is_dir():
        raise BadInput(f"{spec.where}: repository folder not found: {spec.repository}")
    return ToolExecutor(spec.repository)


def run_lane(
    spec: LaneSpec,
    client: ChatClient,
    settings: ChatSettings,
    recorder: LaneRecorder,
    *,
    options: LaneOptions | None = None,
    runner: dict[str, Any] | None = None,
    executor: ToolExecutor | None = None,
    stop: threading.Event | None = None,
    clock: Clock = SYSTEM_CLOCK,
) -> LaneOutcome:
    """Run one lane to its end and record every step of it (see `lanes.records`).

    The repository is read from disk as it is now (a lane works on the working tree); a missing
    one ends the lane "failed" before its first turn. `stop` ends the lane between turns with
    status "interrupted". An unexpected error is recorded as the lane's end ("failed", or
    "interrupted" for KeyboardInterrupt) and raised again. A turn that fails once `stop` is set
    (its request cancelled) ends the lane "interrupted", not "failed".
    """
    options = options or LaneOptions()
    recorder.start(spec, runner or {}, settings, as_json(options))
    if executor is None:
        try:
            executor = check_repository(spec)
        except BadInput as exc:
            lane = _Lane(spec, client, settings, recorder, options, None, stop, clock)
            return lane.finish("failed", error=str(exc))
    lane = _Lane(spec, client, settings, recorder, options, executor, stop, clock)
    try:
        return lane.run()
    except KeyboardInterrupt:
        lane.finish("interrupted", error="interrupted (KeyboardInterrupt)")
        raise
    except Exception as exc:
        lane.finish("failed", error=f"{type(exc).__name__}: {exc}")
        raise


def run_spec_lane(
    spec: LaneSpec,
    config: LocalModels,
    client: ChatClient,
    lanes: Path,
    options: LaneOptions,
    max_tokens: int | None,
    stop: threading.Event,
    executor: ToolExecutor,
) -> LaneOutcome:
    """`lane run`: one lane of `spec` against production through `client` (closed after),
    recorded under `lanes`, with the config's window and output cap unless `max_tokens`."""
    try:
        recorder = LaneRecorder(lanes, new_run_id(spec.id))
        settings = ChatSettings(window=config.window, max_tokens=max_tokens or config.max_tokens)
        return run_lane(
            spec,
            client,
            settings,
            recorder,
            options=options,
            runner=runner_description(config),
            executor=executor,
            stop=stop,
        )
    finally:
        client.close()
