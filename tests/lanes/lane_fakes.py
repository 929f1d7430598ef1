"""A scripted chat client and small builders for lane tests (no runner needed)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

from vibey_gh.interfaces.slots_interface import ChatSettings, ToolCall, TurnResult

Reply = TurnResult | Callable[[list[dict[str, Any]]], TurnResult]


def answer(text: str = "The answer.", prompt_tokens: int = 100) -> TurnResult:
    return TurnResult(200, "stop", prompt_tokens, 5, text, (), 0.0, 0.1, None)


def calls(*pairs: tuple[str, dict[str, Any]], text: str = "") -> TurnResult:
    tool_calls = tuple(ToolCall(name, arguments) for name, arguments in pairs)
    return TurnResult(200, "tool_calls", 120, 10, text, tool_calls, 0.0, 0.1, None)


def read(path: str, **extra: Any) -> TurnResult:
    return calls(("read_file", {"path": path, **extra}))


def parse_error() -> TurnResult:
    return TurnResult(
        500, None, None, None, "", (), 0.0, 0.1, "http 500: error parsing tool call: raw='{'"
    )


def unparsed() -> TurnResult:
    return TurnResult(
        200,
        "tool_calls",
        90,
        8,
        "",
        (ToolCall("read_file", {"_unparsed": "{path:"}),),
        0.0,
        0.1,
        None,
    )


def refused_connection() -> TurnResult:
    return TurnResult(None, None, None, None, "", (), 0.0, 0.1, "connection failed: refused")


class ScriptedClient:
    """Answers from a script, one reply per request; remembers every request it got."""

    def __init__(self, replies: list[Reply]) -> None:
        self.replies = list(replies)
        self.requests: list[list[dict[str, Any]]] = []
        self.tools: list[list[dict[str, Any]] | None] = []
        self.settings: list[ChatSettings] = []
        self.closed = False

    def chat(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        settings: ChatSettings,
    ) -> TurnResult:
        self.requests.append(copy.deepcopy(messages))
        self.tools.append(copy.deepcopy(tools))
        self.settings.append(settings)
        if not self.replies:
            raise AssertionError("the lane sent more requests than the script holds")
        reply = self.replies.pop(0)
        return reply(messages) if callable(reply) else reply

    def close(self) -> None:
        self.closed = True


def make_repo(root: Path) -> Path:
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "a.py").write_text("def a():\n    return 1\n", encoding="utf-8")
    (root / "pkg" / "b.py").write_text("def b():\n    return 2\n", encoding="utf-8")
    (root / "README.md").write_text("A tiny repository.\n", encoding="utf-8")
    return root


def write_spec(folder: Path, spec_id: str, repository: str, files: list[str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{spec_id}.toml"
    listed = ", ".join(f'"{name}"' for name in files)
    path.write_text(
        f'id = "{spec_id}"\ntitle = "Title of {spec_id}"\n'
        f'task = "Say what the files of {spec_id} do."\n'
        f'repository = "{repository}"\nfiles = [{listed}]\n',
        encoding="utf-8",
    )
    return path
