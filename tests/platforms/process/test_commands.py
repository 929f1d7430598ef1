"""The real command runner on this machine's own tools, and the canned one."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from vibey_gh.platforms.process.commands import (
    EXIT_NOT_FOUND,
    EXIT_NOT_RUNNABLE,
    EXIT_TIMED_OUT,
    CannedCommandRunner,
    SubprocessCommandRunner,
    failure_reason,
    format_argv,
    read_output,
)


def test_runs_argv_without_a_shell() -> None:
    run = SubprocessCommandRunner()
    code, out = run.run((sys.executable, "-c", "import sys; print(sys.argv[1])", "$HOME; echo x"))
    assert code == 0
    # a shell would have expanded $HOME and run the second command
    assert out == "$HOME; echo x\n"


def test_exit_code_and_stderr_are_kept() -> None:
    run = SubprocessCommandRunner()
    code, out = run.run((sys.executable, "-c", "import sys; print('out'); sys.exit('bad')"))
    assert (code, out) == (1, "out\n")
    assert run.last_stderr.strip() == "bad"


def test_missing_executable_is_exit_127_not_an_exception() -> None:
    run = SubprocessCommandRunner()
    assert run.run(("no-such-tool-here",)) == (EXIT_NOT_FOUND, "")
    assert read_output(run, ("no-such-tool-here", "-x")) == (None, "no-such-tool-here not found")


def test_file_that_is_not_executable_is_exit_126(tmp_path: Path) -> None:
    script = tmp_path / "tool"
    script.write_text("#!/bin/sh\necho hi\n")
    os.chmod(script, 0o600)
    assert SubprocessCommandRunner().run((str(script),)) == (EXIT_NOT_RUNNABLE, "")


def test_a_hanging_tool_is_stopped_and_reported() -> None:
    run = SubprocessCommandRunner(timeout_s=0.2)
    code, out = run.run((sys.executable, "-c", "import time; time.sleep(30)"))
    assert (code, out) == (EXIT_TIMED_OUT, "")
    assert "timed out" in failure_reason((sys.executable, "-c", "..."), code)


def test_environment_is_injected() -> None:
    run = SubprocessCommandRunner(environ={"VIBEY_PROBE_VALUE": "seen", "PATH": os.environ["PATH"]})
    code, out = run.run((sys.executable, "-c", "import os; print(os.environ['VIBEY_PROBE_VALUE'])"))
    assert (code, out) == (0, "seen\n")


def test_canned_runner_records_and_answers() -> None:
    run = CannedCommandRunner({("sysctl", "-n", "hw.model"): (0, "Mac15,8\n")})
    assert run.run(("sysctl", "-n", "hw.model")) == (0, "Mac15,8\n")
    assert run.run(("vm_stat",)) == (EXIT_NOT_FOUND, "")
    assert run.calls == [("sysctl", "-n", "hw.model"), ("vm_stat",)]


def test_failure_reasons_and_display() -> None:
    assert (
        failure_reason(("systemctl", "restart", "ollama"), 5)
        == "`systemctl restart ollama` exited 5"
    )
    assert (
        format_argv(("osascript", "-e", 'quit app "Ollama"'))
        == "osascript -e 'quit app \"Ollama\"'"
    )
