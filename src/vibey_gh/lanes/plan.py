"""How a lane opens: the system prompt and the plan (its first user message).

Both depend on the spec alone, never on the machine or the time, so the corpus can rebuild a
lane's opening byte for byte and a replayed turn is the turn a lane sends.
"""

from __future__ import annotations

from .specs import LaneSpec
from .tools import LIST_DIR, READ_FILE, TOOL_RESULT_CHAR_CAP

SYSTEM_PROMPT = (
    "You are a careful engineer reading a software repository to answer one task. "
    f"You have two tools: {READ_FILE} returns a file's text (optionally only some lines) and "
    f"{LIST_DIR} lists a folder. Paths are relative to the repository root. "
    "Follow the plan in the task message: read the files it names, in its order, one tool call "
    f"at a time. Results longer than {TOOL_RESULT_CHAR_CAP:,} characters are cut, and the cut is "
    "marked; read a later part with offset and limit if you need it. "
    "When you have read enough, stop calling tools and answer in plain text: say what you "
    "found, name the files and functions it rests on, and say what you could not check. "
    "Never describe a file you have not read."
)


def build_plan(spec: LaneSpec) -> str:
    """The plan: the task, then the files to read in order (as the spec writes them; a glob
    stands for its matches in sorted order), then what the answer must hold."""
    reading = "\n".join(f"   - {pattern}" for pattern in spec.files)
    return (
        f"Task {spec.id}: {spec.title}\n"
        f"\n"
        f"{spec.task.strip()}\n"
        f"\n"
        f"Plan:\n"
        f"1. Read these files with {READ_FILE}, in this order "
        f"(a pattern stands for its matches, in sorted order):\n"
        f"{reading}\n"
        f"2. Answer the task in plain text, citing the files and functions you rely on."
    )


def opening_messages(spec: LaneSpec) -> list[dict[str, object]]:
    """A lane's first request: the system prompt and the plan, in OpenAI chat format."""
    return [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": build_plan(spec)},
    ]
