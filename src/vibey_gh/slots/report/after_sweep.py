"""What `slots calibrate` says after a sweep: what `slots allowed` answers now (the gate asked
again, as a what-if), and the config line that would make it use the evidence."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...config import CONFIG_NAME, LocalModels

if TYPE_CHECKING:
    from ..gate.allowed import AllowedAnswer

# what `slots allowed` would answer for a config, filing no calibration request
AskAllowed = Callable[[LocalModels], "AllowedAnswer"]


def what_allowed_answers_now(
    config: LocalModels,
    decide_allowed: AskAllowed,
    written: LocalModels | None = None,
    fingerprint: str | None = None,
) -> dict[str, Any]:
    """What `slots allowed` answers after the sweep, and, when the declaration is not
    "measured", what it would answer with it and the config line that says so.

    `written` is the config as `slots allowed` reads it, without the command's options: when
    those options (a demo's runner, `--runner`, `--model`, `--window`) measured another setup
    than the one it names, the line alone would not make `allowed` read this evidence, and
    `config_applies` is false with what `allowed` would answer (`with_written`)."""
    after: dict[str, Any] = {"allowed": decide_allowed(config).to_json()}
    if config.concurrent_runs != "measured":
        measured = decide_allowed(config.with_overrides(concurrent_runs="measured"))
        after["with_measured"] = measured.to_json()
        after["config_line"] = 'concurrent_runs = "measured"'
        after["config_file"] = str(config.source or Path(CONFIG_NAME).absolute())
        after["config_exists"] = config.source is not None
        after["config_applies"] = True
        setup = ("runner", "model", "window", "production_url")
        if written is not None and any(
            getattr(written, name) != getattr(config, name) for name in setup
        ):
            as_written = decide_allowed(written.with_overrides(concurrent_runs="measured"))
            if as_written.fingerprint != fingerprint:
                after["config_applies"] = False
                after["with_written"] = as_written.to_json()
    return after


def describe_after(after: dict[str, Any]) -> list[str]:
    now = after["allowed"]
    lines = [f"allowed now: {now['allowed']} — {now['reason']}"]
    measured = after.get("with_measured")
    if measured is None:
        return lines
    # a config file that is not there is named as one to create, never as if it were there
    exists = after.get("config_exists", True)
    named_by = (
        f"the one {after['config_file']} names"
        if exists
        else f"the defaults (no config file yet; {after['config_file']} would be read)"
    )
    if not after.get("config_applies", True):
        written = after["with_written"]
        lines.append(
            f"the evidence supports {measured['allowed']} for the setup this sweep measured, "
            f"not for {named_by}: with {after['config_line']} under [local_models] there, "
            f"`slots allowed` would answer {written['allowed']} ({written['reason']}). To "
            "measure the setup the config names: `vibey-gh slots calibrate --corpus FILE` "
            "(`vibey-gh slots corpus` builds one)"
        )
        return lines
    where = (
        f"in {after['config_file']}"
        if exists
        else f"in {after['config_file']} (the file does not exist yet: create it with these lines)"
    )
    lines.append(
        f"the evidence supports {measured['allowed']} ({measured['reason']}); to use it, "
        f"put this line under [local_models] {where}:"
    )
    if not exists:
        lines.append("  [local_models]")
    lines.append(f"  {after['config_line']}")
    return lines
