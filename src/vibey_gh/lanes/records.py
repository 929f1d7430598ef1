"""A lane's durable record: `events.jsonl` under the state root, one event a line.

Every line is appended and fsynced before the lane goes on (`files.append_line_durably`), so a
crash or a reboot loses at most the line in flight. The folder is `<records root>/<run_id>/`,
where the records root is `StateLayout.lanes` (a storm keeps its lanes in a folder of its own
inside it) — never a temporary directory, which a reboot may wipe along with the only
record of what the model was asked.

Events (every line has "event", "run_id", "t" = epoch seconds and "mono" = monotonic seconds)::

    {"event": "start", "schema_version": 1, "kind": "vibey-gh lane record",
     "spec": {...}, "runner": {...}, "settings": {...}, "options": {...}, "pid": 1234}
    {"event": "turn", "index": 0, "attempt": 1,
     "payload": {"messages": [...], "tools": [...]}}          # written before it is sent
    {"event": "reply", "index": 0, "attempt": 1, "status": 200, "finish_reason": "tool_calls",
     "prompt_tokens": 812, "output_tokens": 24, "text": "", "tool_calls": [...],
     "error": null, "malformed": false, "started": ..., "ended": ..., "latency_s": ...}
    {"event": "tool", "index": 0, "call_id": "call_…", "name": "read_file",
     "arguments": {...}, "result": "...", "refused": false, "chars": 4012}
    {"event": "end", "status": "answered", "answer": "...", "turns": 3, "retries": 0,
     "tool_calls": 2, "refused_tools": 0, "error": null, "duration_s": ...}

"turn" events are the shape `slots corpus --from-lanes` reads (see `slots.corpus.pool`): a retried
request is a second "turn" event with the same index, which the pool counts and skips. The
"mono" of a "reply" and of the next "turn" give that turn's think time — the time the lane
spent in its tools between them (`slots.corpus.think_time`).
End statuses: "answered" (a plain answer), "max_turns" (no answer within the limit), "failed"
(a turn the runner did not serve, or malformed tool calls past the retries) and "interrupted"
(stopped on request between turns).
"""

from __future__ import annotations

import os
import re
import secrets
import time
from collections.abc import Iterator
from pathlib import Path

import msgspec

from ..clock import SYSTEM_CLOCK, Clock
from ..errors import BadInput
from ..files import append_line_durably, canonical_json, ensure_private_dir
from ..guarded import InputProblem, NotJson, loads_json, read_regular_text
from ..interfaces.schema import as_json
from ..interfaces.slots_interface import ChatSettings, TurnResult
from .specs import LaneSpec

RECORD_SCHEMA = 1
RECORD_KIND = "vibey-gh lane record"
EVENTS_FILE = "events.jsonl"
FINISHED_STATUSES = frozenset({"answered", "max_turns"})
END_STATUSES = frozenset({"answered", "max_turns", "failed", "interrupted"})
_RUN_ID_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def new_run_id(spec_id: str, clock: Clock = SYSTEM_CLOCK) -> str:
    """`<spec id>-<UTC time>-<6 hex>`: sortable by time, unique without coordination."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(clock.now()))
    safe = _RUN_ID_UNSAFE.sub("_", spec_id) or "lane"
    return f"{safe}-{stamp}-{secrets.token_hex(3)}"


def spec_json(spec: LaneSpec) -> dict[str, object]:
    return {
        "id": spec.id,
        "title": spec.title,
        "task": spec.task,
        "repository": str(spec.repository),
        "files": list(spec.files),
        "commit": spec.commit,
        "source": str(spec.source) if spec.source else None,
    }


class LaneRecorder:
    """Appends one lane's events to `<records_root>/<run_id>/events.jsonl`."""

    def __init__(self, records_root: Path, run_id: str, clock: Clock = SYSTEM_CLOCK) -> None:
        if not run_id or _RUN_ID_UNSAFE.search(run_id) or run_id.startswith("."):
            raise BadInput(f"run id {run_id!r} may hold only letters, digits, '.', '_' and '-'")
        self.run_id = run_id
        self.folder = records_root / run_id
        self.path = self.folder / EVENTS_FILE
        self.clock = clock
        if self.path.exists():
            raise BadInput(f"a lane record already exists at {self.path}; run ids are unique")
        ensure_private_dir(self.folder)

    def write(self, event: str, **fields: object) -> dict[str, object]:
        line = {
            "event": event,
            "run_id": self.run_id,
            "t": self.clock.now(),
            "mono": self.clock.monotonic(),
            **fields,
        }
        append_line_durably(self.path, canonical_json(line))
        return line

    def start(
        self,
        spec: LaneSpec,
        runner: dict[str, object],
        settings: ChatSettings,
        options: dict[str, object],
    ) -> None:
        self.write(
            "start",
            schema_version=RECORD_SCHEMA,
            kind=RECORD_KIND,
            spec=spec_json(spec),
            runner=runner,
            settings={
                "window": settings.window,
                "max_tokens": settings.max_tokens,
                "temperature": settings.temperature,
                "seed": settings.seed,
                "timeout_s": settings.timeout_s,
            },
            options=options,
            pid=os.getpid(),
        )

    def turn(
        self,
        index: int,
        attempt: int,
        messages: list[dict[str, object]],
        tools: list[dict[str, object]],
    ) -> None:
        self.write(
            "turn",
            index=index,
            attempt=attempt,
            payload={"messages": messages, "tools": tools},
        )

    def reply(self, index: int, attempt: int, result: TurnResult, malformed: bool) -> None:
        data = as_json(result)
        self.write(
            "reply",
            index=index,
            attempt=attempt,
            malformed=malformed,
            latency_s=result.latency_s,
            **data,
        )

    def tool(
        self,
        index: int,
        call_id: str,
        name: str,
        arguments: dict[str, object],
        result: str,
        refused: bool,
    ) -> None:
        self.write(
            "tool",
            index=index,
            call_id=call_id,
            name=name,
            arguments=arguments,
            result=result,
            refused=refused,
            chars=len(result),
        )

    def end(self, **fields: object) -> None:
        if fields.get("status") not in END_STATUSES:
            raise ValueError(f"unknown lane end status {fields.get('status')!r}")
        self.write("end", **fields)


# --- reading ---------------------------------------------------------------------------------


class LaneRecord(msgspec.Struct, frozen=True):
    """A record as read back. `end` is None for a lane that never finished (killed, or still
    running); `torn_tail` is True when the last line was cut off by a crash."""

    path: Path
    events: tuple[dict[str, object], ...]
    torn_tail: bool = False

    @property
    def run_id(self) -> str:
        return self.path.parent.name

    @property
    def start(self) -> dict[str, object] | None:
        return next((e for e in self.events if e.get("event") == "start"), None)

    @property
    def end(self) -> dict[str, object] | None:
        return next((e for e in reversed(self.events) if e.get("event") == "end"), None)

    @property
    def status(self) -> str | None:
        end = self.end
        return str(end["status"]) if end and "status" in end else None

    def of_kind(self, event: str) -> list[dict[str, object]]:
        return [e for e in self.events if e.get("event") == event]


def read_record(path: Path) -> LaneRecord:
    """Read one events.jsonl (a folder holding one is accepted too). A torn last line is
    skipped and flagged; any other bad line is BadInput naming it."""
    if path.is_dir():
        path = path / EVENTS_FILE
    try:
        lines = read_regular_text(path).splitlines()
    except FileNotFoundError:
        raise BadInput(f"no lane record at {path}") from None
    except InputProblem as problem:
        raise BadInput(f"lane record {path} {problem}") from None
    numbered = [(n, line) for n, line in enumerate(lines, 1) if line.strip()]
    events: list[dict[str, object]] = []
    torn = False
    for position, (number, line) in enumerate(numbered):
        try:
            event = loads_json(line)
        except NotJson as problem:
            if position == len(numbered) - 1:
                torn = True
                continue
            raise BadInput(f"{path}:{number}: {problem}") from None
        except InputProblem as problem:
            raise BadInput(f"{path}:{number}: {problem}") from None
        if not isinstance(event, dict) or not isinstance(event.get("event"), str):
            raise BadInput(f"{path}:{number}: not a lane event")
        events.append(event)
    return LaneRecord(path, tuple(events), torn)


def iter_records(records_root: Path) -> Iterator[LaneRecord]:
    """Every lane record directly under `records_root`, by run id."""
    if not records_root.is_dir():
        return
    for folder in sorted(records_root.iterdir()):
        if (folder / EVENTS_FILE).is_file():
            yield read_record(folder / EVENTS_FILE)
