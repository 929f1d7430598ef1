"""A worker that crashes ends the replay with its error: a step is never judged on the turns
of the workers that survived it."""

from __future__ import annotations

import threading
from typing import Any, cast

import pytest

from tests.support.slot_builders import answer
from vibey_gh.interfaces.slots_interface import ChatSettings
from vibey_gh.interfaces.turns import TurnResult
from vibey_gh.runners.contract import RunningRunner
from vibey_gh.slots.corpus.turns import Segment, Turn
from vibey_gh.slots.measurement.stepping.replay import replay_corpus


class BreaksOnce:
    """Answers every turn, except that the first call of one worker thread raises."""

    def __init__(self) -> None:
        self.calls = 0
        self.lock = threading.Lock()

    def chat(
        self, messages: list[dict[str, Any]], tools: Any, settings: ChatSettings
    ) -> TurnResult:
        with self.lock:
            self.calls += 1
            first = self.calls == 1
        if first:
            raise TypeError("a bug in the client")
        return answer("ok")


def test_a_crashed_worker_raises_its_error_after_the_others_stop() -> None:
    segments = [
        Segment(f"r{i}#0-1", f"r{i}", 0, (Turn(f"r{i}#0", f"r{i}", 0, [{"role": "user",
                "content": str(i)}], [], 3),))
        for i in range(4)
    ]  # fmt: skip
    with pytest.raises(TypeError, match="a bug in the client"):
        replay_corpus(
            cast(RunningRunner, BreaksOnce()),
            segments,
            workers=2,
            settings=ChatSettings(window=1024),
            check=lambda _turns: None,
        )
