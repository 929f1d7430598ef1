"""The commands the README and the guides show name nothing a reader's machine lacks: no
folder the repository does not have, no state folder of one platform spelled out."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs" / "guides").glob("*.md"))]
SHELL_BLOCK = re.compile(r"^( *)```(?:sh)?\n(.*?)^\1```", re.DOTALL | re.MULTILINE)


def command_lines(page: Path) -> list[str]:
    lines = []
    for _indent, body in SHELL_BLOCK.findall(page.read_text(encoding="utf-8")):
        for line in body.splitlines():
            command = re.split(r"\s{2,}#", line.strip())[0].strip()
            if command.startswith("vibey-gh "):
                lines.append(command)
    return lines


def test_no_command_spells_out_a_platforms_state_folder() -> None:
    found = [
        f"{page.name}: {line}"
        for page in PAGES
        for line in command_lines(page)
        if "~/.local/state" in line or "Application Support" in line
    ]
    assert found == [], "use --from-my-lanes, or name the state folder `doctor` prints"


def test_the_readmes_commands_name_only_folders_the_repository_has() -> None:
    readme = ROOT / "README.md"
    commands = command_lines(readme)
    assert any(line.startswith("vibey-gh slots corpus") for line in commands)
    for line in commands:
        words = shlex.split(line)
        for option, value in zip(words, words[1:], strict=False):
            if option == "--specs":
                assert (ROOT / value).exists(), f"{line}: {value} is not in the repository"
