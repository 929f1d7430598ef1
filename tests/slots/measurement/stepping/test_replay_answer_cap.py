"""Replay sends each turn with its own answer cap where the corpus gives one below the step's."""

from __future__ import annotations

from typing import Any, cast

from tests.support.slot_builders import answer
from vibey_gh.interfaces.slots_interface import ChatSettings
from vibey_gh.interfaces.turns import TurnResult
from vibey_gh.runners.contract import RunningRunner
from vibey_gh.slots.corpus.turns import Segment, Turn
from vibey_gh.slots.measurement.stepping.replay import replay_corpus


class AskedCaps:
    """Answers every request at once and keeps the output cap it was sent with."""

    def __init__(self) -> None:
        self.caps: dict[str, int] = {}

    def chat(
        self, messages: list[dict[str, Any]], tools: Any, settings: ChatSettings
    ) -> TurnResult:
        # the turn's own text, after the line that marks its pass
        self.caps[str(messages[0]["content"]).splitlines()[-1]] = settings.max_tokens
        return answer("ok")


def turn(index: int, cap: int | None) -> Turn:
    messages = [{"role": "user", "content": f"turn {index}"}]
    return Turn(f"r#{index}", "r", index, messages, [], 3, max_tokens=cap)


def test_a_turns_cap_below_the_steps_is_sent_and_a_higher_one_is_not() -> None:
    runner = AskedCaps()
    segment = Segment("r#0-2", "r", 0, (turn(0, 20), turn(1, None), turn(2, 5000)))
    replay_corpus(
        cast(RunningRunner, runner),
        [segment],
        workers=1,
        settings=ChatSettings(window=1024, max_tokens=128),
        check=lambda _turns: None,
    )
    assert runner.caps == {"turn 0": 20, "turn 1": 128, "turn 2": 128}
