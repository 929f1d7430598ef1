"""Setting the production runner's slots and window: the RunnerParallelism implementations.

`plan()` renders exactly what would be done (commands, files with their content); `apply()`
does it through the injected CommandRunner and the atomic file helpers, stopping at the first
step that fails and saying which steps ran. An action with neither a command nor a file is a
note for the operator: nothing automatic happens for it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path

from ..errors import Refused, RunnerError
from ..interfaces.slots_interface import CommandRunner, PlannedAction
from .process.commands import failure_reason, format_argv
from .storage.atomic_files import atomic_write_text

NUM_PARALLEL = "OLLAMA_NUM_PARALLEL"
CONTEXT_LENGTH = "OLLAMA_CONTEXT_LENGTH"
SYSTEMD_DROP_IN = "etc/systemd/system/ollama.service.d/vibey-gh-slots.conf"


def is_note(action: PlannedAction) -> bool:
    return not action.argv and action.path is None


def can_write(path: Path) -> bool:
    """Whether this process may create or replace `path` (checked on its nearest folder)."""
    probe = path.parent
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    return os.access(probe, os.W_OK)


def perform(
    actions: list[PlannedAction],
    run: CommandRunner,
    writable: Callable[[Path], bool] = can_write,
) -> list[PlannedAction]:
    """Do each action in order; return the ones done. Raise at the first failure.

    Files are checked for permission before anything runs, so a run without root changes
    nothing rather than half of the plan.
    """
    for action in actions:
        if action.path is not None and not writable(action.path):
            raise Refused(
                f"cannot write {action.path}: permission denied (run it as root, e.g. with sudo);"
                " nothing was changed"
            )
    done: list[PlannedAction] = []
    for position, action in enumerate(actions):
        if action.path is not None:
            try:
                atomic_write_text(action.path, action.content or "")
            except OSError as exc:
                raise RunnerError(
                    _stopped(f"writing {action.path} failed: {exc.strerror or exc}", done)
                ) from None
        if action.argv:
            code, out = run.run(action.argv)
            if code != 0:
                # systemctl and launchctl explain themselves on stderr, which the real
                # runner keeps beside the exit code
                said = out.strip() or str(getattr(run, "last_stderr", "")).strip()
                detail = said.splitlines()[-1:]
                why = failure_reason(action.argv, code) + (f": {detail[0]}" if detail else "")
                left = [a.description for a in actions[position + 1 :] if not is_note(a)]
                raise RunnerError(_stopped(why, done, left))
        if not is_note(action):
            done.append(action)
    return done


def _stopped(why: str, done: list[PlannedAction], left: list[str] | None = None) -> str:
    parts = [why]
    parts.append(
        "done before it: " + "; ".join(a.description for a in done) if done else "nothing done"
    )
    if left:
        parts.append("not done: " + "; ".join(left))
    return " — ".join(parts)


class MacOSAppParallelism:
    """The Ollama macOS app: launchctl setenv, then quit and reopen the app.

    The app passes variables set with `launchctl setenv` to the server it starts. Reopening it
    also applies any update it has staged, which changes the runner version and so the
    fingerprint; the plan says so.
    """

    def __init__(
        self, run: CommandRunner, app: str = "Ollama", settings: Mapping[str, str] | None = None
    ) -> None:
        self.run = run
        self.app = app
        # the other variables the evidence was measured with, set beside the two of ours
        self.settings = dict(sorted((settings or {}).items()))

    def plan(self, slots: int, window: int) -> list[PlannedAction]:
        variables = {NUM_PARALLEL: str(slots), CONTEXT_LENGTH: str(window), **self.settings}
        return [
            *(
                PlannedAction(
                    f"set {name}={value} for apps started from now on (until reboot)",
                    argv=("launchctl", "setenv", name, value),
                )
                for name, value in variables.items()
            ),
            PlannedAction(
                f"quit the {self.app} app (its server stops; running requests fail)",
                argv=("osascript", "-e", f'quit app "{self.app}"'),
            ),
            PlannedAction(
                f"open the {self.app} app again (a staged update is applied now, which makes "
                "the evidence for the old version stale)",
                argv=("open", "-a", self.app),
            ),
        ]

    def apply(self, actions: list[PlannedAction]) -> None:
        perform(actions, self.run)


class SystemdParallelism:
    """Ollama as a systemd service: a drop-in with Environment= lines, daemon-reload, restart.

    The drop-in is written under `root` (the real machine's "/" by default), so the operator's
    own override.conf is left alone and removing ours undoes the change.
    """

    def __init__(
        self,
        run: CommandRunner,
        root: Path = Path("/"),
        *,
        unit: str,
        writable: Callable[[Path], bool] = can_write,
        settings: Mapping[str, str] | None = None,
    ) -> None:
        self.run = run
        self.root = root
        self.unit = unit
        self.writable = writable
        # the other variables the evidence was measured with, set beside the two of ours
        self.settings = dict(sorted((settings or {}).items()))

    @property
    def drop_in(self) -> Path:
        return self.root / SYSTEMD_DROP_IN.replace("ollama.service.d", f"{self.unit}.service.d")

    def render(self, slots: int, window: int) -> str:
        return (
            f"# Written by `vibey-gh slots apply`: {slots} slot(s) of {window} tokens each.\n"
            f"# Remove this file, then daemon-reload and restart {self.unit}, to undo it.\n"
            "[Service]\n"
            f'Environment="{NUM_PARALLEL}={slots}"\n'
            f'Environment="{CONTEXT_LENGTH}={window}"\n'
            + "".join(f'Environment="{name}={value}"\n' for name, value in self.settings.items())
        )

    def plan(self, slots: int, window: int) -> list[PlannedAction]:
        return [
            PlannedAction(
                f"write a drop-in for {self.unit}.service with "
                f"{2 + len(self.settings)} Environment= lines",
                path=self.drop_in,
                content=self.render(slots, window),
            ),
            PlannedAction("reload systemd's unit files", argv=("systemctl", "daemon-reload")),
            PlannedAction(
                f"restart {self.unit} (running requests fail)",
                argv=("systemctl", "restart", self.unit),
            ),
        ]

    def apply(self, actions: list[PlannedAction]) -> None:
        perform(actions, self.run, self.writable)


class ManualParallelism:
    """A runner this tool does not restart (embedded, llama-server, an unmanaged Ollama):
    the plan is the command to restart it with, and nothing happens automatically.

    `describe(slots, window)` says what to do; `command(slots, window)`, when given, is the
    command line to do it with.
    """

    def __init__(
        self,
        describe: Callable[[int, int], str],
        command: Callable[[int, int], tuple[str, ...]] | None = None,
    ) -> None:
        self.describe = describe
        self.command = command

    def plan(self, slots: int, window: int) -> list[PlannedAction]:
        text = self.describe(slots, window)
        if self.command is not None:
            text = f"{text}: {format_argv(self.command(slots, window))}"
        return [PlannedAction(text)]

    def apply(self, actions: list[PlannedAction]) -> None:
        """Nothing is automatic here: the operator restarts the runner."""
