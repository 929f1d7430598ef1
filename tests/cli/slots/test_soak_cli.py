"""`slots soak` on bad input: one line, exit 2, nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.fixtures import RunCli
from vibey_gh.state import StateLayout


@pytest.mark.parametrize(
    ("duration", "said"),
    [("soon", "is not a duration"), ("0", "must be longer than zero"),
     ("0s", "must be longer than zero"), ("8d", "is more than a week"), ("", "is not a duration")],
)  # fmt: skip
def test_a_bad_duration_is_one_line_and_exit_2(
    run_cli: RunCli, layout: StateLayout, duration: str, said: str
) -> None:
    result = run_cli(["slots", "soak", "--demo", "--runner", "simulated", "--duration", duration])
    assert result.exit_code == 2
    assert said in result.stderr and result.stderr.count("\n") == 1
    assert not (layout.root / "runs").exists() and not (layout.root / "progress").exists()


def test_an_n_the_evidence_does_not_support_needs_force(
    run_cli: RunCli, layout: StateLayout
) -> None:
    args = ["slots", "soak", "--demo", "--runner", "simulated", "--slots", "3", "--duration", "1m"]
    result = run_cli(args)
    assert result.exit_code == 2
    assert "--slots 3 is not supported by evidence" in result.stderr
    assert "--force" in result.stderr and result.stderr.count("\n") == 1
    assert not (layout.root / "evidence" / "soak").exists()


@pytest.mark.parametrize(
    ("args", "said"),
    [(["--slots", "0"], "--slots must be 1 or more"),
     ([], "--corpus FILE is required"),
     (["--corpus", "missing.json"], "missing.json")],
)  # fmt: skip
def test_other_bad_input_is_one_line(run_cli: RunCli, args: list[str], said: str) -> None:
    result = run_cli(["slots", "soak", *args])
    assert result.exit_code == 2, result.output
    assert said in result.stderr and result.stderr.count("\n") == 1


def test_help_says_how_to_use_it(run_cli: RunCli) -> None:
    result = run_cli(["slots", "soak", "--help"])
    assert result.exit_code == 0
    assert "--duration" in result.output and "vibey-gh slots soak --corpus" in result.output


def test_nothing_requested_is_nothing_to_do(run_cli: RunCli, tmp_path: Path) -> None:
    result = run_cli(
        ["slots", "soak", "--demo", "--runner", "simulated", "--if-requested", "--json"]
    )
    assert result.exit_code == 0, result.output
    assert '"skipped": true' in result.stdout
