"""The docs site builds with --strict, and the pages that mirror the code stay current."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import yaml
from msgspec.structs import fields
from tools.gen_cli_reference import render_cli_reference, walk_commands

from vibey_gh.cli.main import cli
from vibey_gh.config import LocalModels, SimulatedModel
from vibey_gh.interfaces.bounds import Bounds

REPO = Path(__file__).resolve().parent.parent.parent
DOCS = REPO / "docs"
MKDOCS_YML = REPO / "mkdocs.yml"
CLI_PAGE = DOCS / "reference" / "cli.md"


def nav_pages(items: list) -> list[str]:
    pages: list[str] = []
    for item in items:
        value = next(iter(item.values())) if isinstance(item, dict) else item
        pages.extend(nav_pages(value) if isinstance(value, list) else [value])
    return pages


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    site = tmp_path / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "-f",
            str(MKDOCS_YML),
            "-d",
            str(site),
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    config = yaml.safe_load(MKDOCS_YML.read_text())
    for page in nav_pages(config["nav"]):
        built = site / ("index.html" if page == "index.md" else page.removesuffix(".md"))
        target = built if built.suffix == ".html" else built / "index.html"
        assert target.is_file(), page


def test_every_page_is_in_the_nav_and_every_nav_entry_exists() -> None:
    config = yaml.safe_load(MKDOCS_YML.read_text())
    assert config["theme"]["name"] == "material"
    listed = set(nav_pages(config["nav"]))
    present = {str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md")}
    assert listed == present


def test_cli_reference_is_current() -> None:
    assert CLI_PAGE.read_text(encoding="utf-8") == render_cli_reference(), (
        "docs/reference/cli.md is out of date: run `python tools/gen_cli_reference.py`"
    )


def test_cli_reference_holds_every_command_and_its_examples() -> None:
    page = CLI_PAGE.read_text(encoding="utf-8")
    paths = [path for path, _ in walk_commands(cli)]
    assert "vibey-gh slots show" in paths and "vibey-gh slots calibrate" in paths
    for path in paths:
        assert f"## `{path}`" in page
    show_help = page.split("## `vibey-gh slots show`", 1)[1].split("\n## ", 1)[0]
    assert "Examples:" in show_help and "--fingerprint" in show_help


def test_cli_reference_does_not_depend_on_the_terminal(monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "40")
    narrow = render_cli_reference()
    monkeypatch.setenv("COLUMNS", "250")
    assert render_cli_reference() == narrow


def test_configuration_reference_names_every_key_with_its_default() -> None:
    page = (DOCS / "reference" / "configuration.md").read_text(encoding="utf-8")
    defaults = LocalModels()
    for field in fields(LocalModels):
        if field.name in ("source", "bounds", "simulated"):  # tables with rows of their own
            continue
        if field.name == "think":  # two keys, read into one value
            assert re.search(r"^\| `think_time` \|", page, re.MULTILINE)
            cap = re.search(r"^\| `think_cap` \| ([^|]+) \|", page, re.MULTILINE)
            assert cap and f"{defaults.think.cap_s:g}" in cap.group(1)
            continue
        row = re.search(rf"^\| `{field.name}` \| ([^|]+) \|", page, re.MULTILINE)
        assert row, field.name
        value = getattr(defaults, field.name)
        if isinstance(value, int | float | str) and field.name != "production_url":
            assert str(value).strip('"') in row.group(1) or f"{value:g}" in row.group(1), field.name
    assert "## `[local_models.simulated]`" in page
    for field in fields(SimulatedModel):
        if getattr(SimulatedModel(), field.name) is None:  # the throttle model: off unless set
            assert re.search(rf"^\| `{field.name}` \| off \|", page, re.MULTILINE), field.name
            continue
        row = re.search(rf"^\| `{field.name}` \| `([^`]+)` \|", page, re.MULTILINE)
        assert row, field.name
        assert float(row.group(1)) == float(getattr(SimulatedModel(), field.name)), field.name
    bound_defaults = Bounds()
    for field in fields(Bounds):
        default = getattr(bound_defaults, field.name)
        if default is None:  # an optional bound (the latency objectives): off unless set
            assert re.search(rf"^\| `{field.name}` \| off \|", page, re.MULTILINE), field.name
            continue
        row = re.search(rf"^\| `{field.name}` \| `([^`]+)` \|", page, re.MULTILINE)
        assert row, field.name
        assert float(row.group(1)) == float(default), field.name


def test_calibrate_guide_covers_each_runner_and_links_the_cluster_guide() -> None:
    page = (DOCS / "guides" / "calibrate.md").read_text(encoding="utf-8")
    for heading in ("## Ollama on macOS", "## Ollama on Linux", "## llama-server"):
        assert heading in page
    assert "(cluster.md)" in page


def test_every_group_s_help_has_examples() -> None:
    from click.testing import CliRunner

    for group in ([], ["slots"], ["runner"], ["lane"], ["storm"]):
        result = CliRunner().invoke(cli, [*group, "--help"])
        assert result.exit_code == 0
        assert "Examples:\n    vibey-gh " in result.output, group


def test_the_first_hour_guide_shows_both_corpus_formats_and_completion() -> None:
    text = (DOCS / "guides" / "first-hour.md").read_text(encoding="utf-8")
    for needle in (
        "pipx install",
        "uv tool install",
        "--from-chat-logs",
        "--from-transcripts",
        'repository = "../.."',
        "_VIBEY_GH_COMPLETE=bash_source",
    ):
        assert needle in text, needle


def test_the_simulated_demo_is_spelled_the_same_everywhere() -> None:
    """The first sweep a newcomer runs: the guides and `calibrate --help` give it with the
    same step length, so the time they promise is the time it takes."""
    from vibey_gh.cli.slots.calibrate import calibrate

    pattern = re.compile(r"vibey-gh slots calibrate --demo --runner simulated[^\n`]*")
    help_text = calibrate.help or ""
    spelled = set()
    for text in (
        (DOCS / "guides" / "first-hour.md").read_text(encoding="utf-8"),
        (DOCS / "guides" / "calibrate.md").read_text(encoding="utf-8"),
        help_text,
    ):
        found = {line.strip() for line in pattern.findall(text)}
        assert found, "each names the simulated demo"
        spelled |= found
    assert spelled == {"vibey-gh slots calibrate --demo --runner simulated --min-step-seconds 2"}
