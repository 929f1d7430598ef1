"""What the storm's idle-time calibration says, in the storm's own terms.

The calibration and the corpus it draws speak to `slots calibrate` and `slots corpus` users:
"lower --segment-turns or raise --window", "add --restart". A storm has none of those options,
so a line it logs names the storm's own option, the config key, or the command that has the
option, never an option `storm run` does not have. Options already inside a quoted command
(`vibey-gh slots forget --checkpoints`) name their own command and are left alone.
"""

from __future__ import annotations

import re

# an option of the calibration or the corpus → what a storm user sets instead
STORM_TERMS = {
    "--window": "window under [local_models]",
    "--port": "calibration_port under [local_models]",
    "--min-step-seconds": "min_step_seconds under [local_models]",
    "--max-step-seconds": "max_step_seconds under [local_models]",
    "--think-time": "think_time under [local_models]",
    "--think-cap": "think_cap under [local_models]",
    "--segment-turns": "--calibration-segment-turns",
    "--segments-per-stratum": "--calibration-segments",
    "--shape": "--calibration-shape",
    "--slots": "--calibration-slots",
    "--max-tokens": "--calibration-max-tokens",
    "--max-runs": "--calibration-max-runs",
    "--threads": "--threads",
}
# options with no storm counterpart: the command that has them is named with them
CORPUS_OPTIONS = frozenset(
    {
        "--specs",
        "--sample-specs",
        "--fill-window",
        "--count-with",
        "--fit",
        "--from-lanes",
        "--from-my-lanes",
        "--from-chat-logs",
        "--seed",
        "--from-transcripts",
        "--from-traces",
        "--from-sessions",
    }
)

_OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
# an unquoted command ("run vibey-gh slots forget --checkpoints"), to the end of its clause
_COMMAND = re.compile(r"vibey-gh\s[^,;:()]*?(?=[,;:()]|\.(?:\s|$)|$)")


def _storm_term(match: re.Match[str]) -> str:
    option = match.group(0)
    if option in STORM_TERMS:
        return STORM_TERMS[option]
    command = "slots corpus" if option in CORPUS_OPTIONS else "slots calibrate"
    return f"`vibey-gh {command} {option}`"


def _outside_commands(text: str) -> str:
    kept = [(m.start(), m.end()) for m in _COMMAND.finditer(text)]
    pieces, at = [], 0
    for start, end in kept:
        pieces += [_OPTION.sub(_storm_term, text[at:start]), text[start:end]]
        at = end
    return "".join([*pieces, _OPTION.sub(_storm_term, text[at:])])


def in_storm_terms(text: str) -> str:
    """`text` with each option outside a command it names put in the storm's terms."""
    parts = text.split("`")
    for outside in range(0, len(parts), 2):  # even parts lie outside backquotes
        parts[outside] = _outside_commands(parts[outside])
    return "`".join(parts)


__all__ = ["STORM_TERMS", "in_storm_terms"]
