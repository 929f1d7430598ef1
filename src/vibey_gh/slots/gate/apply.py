"""`slots apply`: give the production runner the number of slots and the window to serve.

The number is `--slots` when given, else what `slots allowed` answers now. A `--slots K` above
that answer is refused, with what the evidence supports, unless forced: apply stays inside the
evidence unless told otherwise. The plan is the
platform's RunnerParallelism's list of actions (commands, files with their content); it is
shown as it is and performed only when asked. Runners this tool does not manage get a note with
the command to restart them by hand.

What was measured is what is restored: when the number comes from evidence, production gets
the settings that evidence was measured with (llama-server's `runner_args` in its restart
command; Ollama's capacity variables beside OLLAMA_NUM_PARALLEL and OLLAMA_CONTEXT_LENGTH), read
from the evidence's own fingerprint fields. When production runs with a capacity variable the
evidence was not measured with, apply cannot take it away (it only sets variables), so it
refuses and says which.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import msgspec

from ...config import LocalModels
from ...errors import BadInput, EvidenceError, Refused
from ...interfaces.slots_interface import PlannedAction, RunnerParallelism
from ...platforms.device.probes import PlatformProbes
from ...platforms.parallelism import is_note
from ...platforms.process.commands import format_argv
from ...runners.registry import measured_settings, runner_kind
from ..evidence.fingerprint import SETTINGS_FIELD
from ..evidence.store import read_fingerprint_fields

if TYPE_CHECKING:
    from ...runners.contract import EnvironmentReader

MAX_SLOTS = 256
MIN_WINDOW = 256
MAX_WINDOW = 1 << 24


class Answer(Protocol):
    """What `slots allowed` gives back, as far as apply reads it."""

    @property
    def allowed(self) -> int: ...

    def line(self) -> str: ...

    # The answer `slots allowed` prints (`AllowedAnswer.to_json`), as apply reads it.
    def to_json(self) -> dict[str, object]: ...


Decide = Callable[[LocalModels], Answer]


class ApplyPlan(msgspec.Struct, frozen=True):
    """What apply would do. `why` says where the number of slots came from."""

    runner: str
    platform: str
    slots: int
    window: int
    why: str
    actions: tuple[PlannedAction, ...]
    answer: dict[str, object] | None = None

    @property
    def automatic(self) -> bool:
        """Whether --yes would do anything (a plan of notes is left to the operator)."""
        return any(not is_note(action) for action in self.actions)

    def answer_of(self, performed: list[PlannedAction] | None) -> ApplyAnswer:
        """The plan and what was done (None: nothing, a dry run), as `--json` answers it."""
        return ApplyAnswer(
            self.runner, self.platform, self.slots, self.window, self.why, self.answer,
            self.automatic, performed is None,
            tuple(a.description for a in performed or ()),
            tuple(action_json(a) for a in self.actions),
        )  # fmt: skip


class ApplyAnswer(msgspec.Struct, frozen=True):
    """`slots apply --json` (written by `as_json`)."""

    runner: str
    platform: str
    slots: int
    window: int
    why: str
    allowed: dict[str, object] | None  # what `slots allowed` answered
    automatic: bool
    dry_run: bool
    performed: tuple[str, ...]
    actions: tuple[dict[str, object], ...]


def action_json(action: PlannedAction) -> dict[str, object]:
    return {
        "description": action.description,
        "argv": list(action.argv) or None,
        "path": str(action.path) if action.path is not None else None,
        "content": action.content,
        "manual": is_note(action),
    }


def _check(slots: int | None, window: int | None) -> None:
    if slots is not None and not 1 <= slots <= MAX_SLOTS:
        raise BadInput(f"--slots must be between 1 and {MAX_SLOTS}, not {slots}")
    if window is not None and not MIN_WINDOW <= window <= MAX_WINDOW:
        raise BadInput(f"--window must be between {MIN_WINDOW} and {MAX_WINDOW}, not {window}")


def parallelism_for(config: LocalModels, probes: PlatformProbes) -> RunnerParallelism:
    """The platform's way of setting the configured production runner's parallelism."""
    return runner_kind(config.runner).parallelism(config, probes)


def plan_apply(
    config: LocalModels,
    probes: PlatformProbes,
    *,
    slots: int | None = None,
    window: int | None = None,
    decide: Decide | None = None,
    force: bool = False,
    read_environment: EnvironmentReader | None = None,
) -> tuple[ApplyPlan, RunnerParallelism]:
    """The plan for `slots` (or the allowed answer's number) slots of `window` tokens, with the
    settings the evidence behind the answer was measured with.

    Refused: `slots` above what `decide` answers, unless `force`; production running with
    settings the evidence was not measured with that apply cannot undo.
    """
    _check(slots, window)
    config = config.with_overrides(window=window)
    answer_json: dict[str, object] | None = None
    if slots is None:
        if decide is None:
            raise BadInput("no --slots given and no way to ask `slots allowed`")
        answer = decide(config)
        slots = answer.allowed
        why = f"slots allowed: {answer.line()}"
        answer_json = answer.to_json()
    elif slots > 1 and not force:
        if decide is None:
            raise BadInput(f"--slots {slots} cannot be checked against `slots allowed`; --force")
        answer = decide(config)
        answer_json = answer.to_json()
        if slots > answer.allowed:
            raise Refused(_beyond_the_evidence(slots, answer, config, decide))
        why = f"--slots {slots}, inside what slots allowed answers ({answer.allowed})"
    elif slots > 1:
        why = f"--slots {slots}, forced"
    else:
        why = f"--slots {slots}"
    config = as_measured(config, answer_json, read_environment)
    parallelism = parallelism_for(config, probes)
    plan = ApplyPlan(
        runner=config.runner,
        platform=probes.platform,
        slots=slots,
        window=config.window,
        why=why,
        actions=tuple(parallelism.plan(slots, config.window)),
        answer=answer_json,
    )
    return plan, parallelism


def as_measured(
    config: LocalModels,
    answer: dict[str, object] | None,
    read_environment: EnvironmentReader | None = None,
) -> LocalModels:
    """`config` with the runner settings of the evidence the answer rests on (unchanged when
    it rests on none); Refused when production has settings apply cannot take back."""
    evidence = answer.get("evidence") if answer else None
    if not isinstance(evidence, str):
        return config
    try:
        fields = read_fingerprint_fields(Path(evidence))
    except EvidenceError as exc:
        raise Refused(f"cannot read what the evidence was measured with: {exc}") from None
    measured = fields.get(SETTINGS_FIELD) or {}
    if not isinstance(measured, dict) or fields.get("window") != config.window:
        raise Refused(
            f"the evidence {evidence} was measured with a window of {fields.get('window')!r}, "
            f"not {config.window}; nothing to apply from it"
        )

    return config.with_overrides(**measured_settings(config, measured, read_environment))


def _beyond_the_evidence(slots: int, answer: Answer, config: LocalModels, decide: Decide) -> str:
    """Why `slots` is refused: the answer, and what the evidence alone supports if that differs."""
    message = f"--slots {slots} is more than `slots allowed` answers: {answer.line()}"
    if config.concurrent_runs != "measured":
        measured = decide(config.with_overrides(concurrent_runs="measured"))
        message += f"; the evidence alone supports {measured.allowed} ({measured.line()})"
    return message + f"; --force applies {slots} anyway"


def perform_apply(plan: ApplyPlan, parallelism: RunnerParallelism) -> list[PlannedAction]:
    """Do the plan; return the actions that were done (none for a plan of notes)."""
    if not plan.automatic:
        return []
    parallelism.apply(list(plan.actions))
    return [action for action in plan.actions if not is_note(action)]


def outcome_line(plan: ApplyPlan, performed: list[PlannedAction] | None) -> str:
    """What `slots apply` says once the plan is printed: whether anything was done."""
    if not plan.automatic:
        return "nothing here is done automatically: restart the runner as shown above."
    if performed is None:
        return "dry run: nothing was done; run again with --yes to do it."
    return f"done: {len(performed)} step(s)."


def describe_plan(plan: ApplyPlan) -> list[str]:
    """The plan as lines: each action, then its command or the file and its exact content."""
    lines = [
        f"{plan.runner} on {plan.platform}: {plan.slots} slot(s) of {plan.window} tokens "
        f"({plan.why})"
    ]
    for number, action in enumerate(plan.actions, 1):
        lines.append(f"  {number}. {action.description}")
        if action.path is not None:
            lines.append(f"     file {action.path}:")
            lines.extend(f"       {line}" for line in (action.content or "").splitlines())
        if action.argv:
            lines.append(f"     $ {format_argv(action.argv)}")
    return lines
