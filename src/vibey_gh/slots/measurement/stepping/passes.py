"""Pass marks: each pass over the corpus is sent as conversations no earlier pass sent.

Within a step the workers cycle through the corpus as often as the step lasts. A runner with a
prompt cache (llama-server's slots, and its `--cache-ram` prompt cache) would serve a repeated
conversation from what the earlier pass left: a faster step, which serves more passes in its
window, would read a larger gain than it has. Production never sees a conversation twice.

So every turn's first message carries a short line naming its pass (`pass_line`), placed
where the corpus's conversations stop sharing their first message (`Marks`): what they all
share (a system prompt, and the tools a chat template puts before it) stays shared between
passes, as production's conversations share it; from the line on, a conversation differs from
itself in another pass, while the turns of one conversation in one pass (a run's segments too)
share it, as production's turns do. A corpus whose conversations all open alike gets the
line at the end of that first message.

Every pass is marked, the first too, so every pass and every step send alike: pass k of a step
at N slots sends the same prompts as pass k at one slot (the fidelity comparison matches first
answers by turn id, and both come from pass 1), and no step meets a cache the step before
left, as the calibration runner is started afresh for every step. A turn's id and what it asks
are unchanged; only the model reads one more line.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import msgspec

from ....runners.contract import Messages
from ...corpus.turns import Segment


def pass_line(pass_number: int) -> str:
    return f"[replay pass {pass_number}]"


def _first_text(messages: Messages) -> str | None:
    content = messages[0].get("content") if messages else None
    return content if isinstance(content, str) else None


class Marks(msgspec.Struct, frozen=True):
    """Where the line goes in a first message of text: `shared` characters in (at a line's
    start), the part every conversation of the corpus opens with."""

    shared: int

    @classmethod
    def of(cls, segments: Sequence[Segment]) -> Marks:
        texts = [
            text for s in segments for t in s.turns if (text := _first_text(t.messages)) is not None
        ]
        if not texts:
            return cls(0)
        common = os.path.commonprefix(texts)
        if all(len(text) == len(common) for text in texts):
            return cls(len(common))
        return cls(common.rfind("\n") + 1)  # the line the first difference is on starts there

    def marked(self, messages: Messages, pass_number: int) -> Messages:
        """`messages` with the pass's line in the first message: in its text where the
        corpus's first messages stop sharing (at the end when they all share it), or as a
        last text part; a first message with neither gets a system message of the line before
        it. The corpus's own messages are not changed."""
        line = pass_line(pass_number)
        if not messages:
            return messages
        first, rest = messages[0], list(messages[1:])
        content = first.get("content")
        if isinstance(content, str):
            at = min(self.shared, len(content))
            if at >= len(content):
                text = f"{content}\n\n{line}" if content else line
            else:
                text = f"{content[:at]}{line}\n{content[at:]}"
            return [{**first, "content": text}, *rest]
        if isinstance(content, list):
            return [{**first, "content": [*content, {"type": "text", "text": line}]}, *rest]
        return [{"role": "system", "content": line}, first, *rest]
