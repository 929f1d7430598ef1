"""The image definition, read by BuildKit's own Dockerfile parser (no engine can build here)."""

from __future__ import annotations

import re
from typing import Any

import pytest
import yaml
from deploy_support import CHART, DOCKERFILE, REPO

dockerfile = pytest.importorskip(
    "dockerfile", reason="the dockerfile parser package (a dev dependency) is not installed"
)


@pytest.fixture(scope="module")
def instructions() -> list[Any]:
    return list(dockerfile.parse_file(str(DOCKERFILE)))


def of_command(instructions: list[Any], command: str) -> list[Any]:
    return [item for item in instructions if item.cmd.upper() == command]


def build_args(instructions: list[Any]) -> dict[str, str]:
    found = {}
    for item in of_command(instructions, "ARG"):
        name, _, default = item.value[0].partition("=")
        found[name] = default
    return found


def test_one_stage_on_a_pinned_official_ollama_image(instructions: list[Any]) -> None:
    (base,) = of_command(instructions, "FROM")
    image = base.value[0]
    assert image.startswith("ollama/ollama:")
    tag = image.split(":", 1)[1]
    resolved = re.sub(r"\$\{(\w+)\}", lambda m: build_args(instructions)[m.group(1)], tag)
    assert re.fullmatch(r"\d+\.\d+\.\d+", resolved), f"{image} resolves to {resolved}"


def test_runs_as_the_chart_user_never_root(instructions: list[Any]) -> None:
    users = of_command(instructions, "USER")
    assert users, "no USER: the image would run as root"
    uid, _, gid = users[-1].value[0].partition(":")
    assert uid.isdigit() and int(uid) != 0, "a numeric non-root uid lets runAsNonRoot check it"
    assert gid.isdigit() and int(gid) != 0
    security = yaml.safe_load((CHART / "values.yaml").read_text(encoding="utf-8"))[
        "securityContext"
    ]
    assert (int(uid), int(gid)) == (security["runAsUser"], security["runAsGroup"])
    args = build_args(instructions)
    assert (args["VIBEY_GH_UID"], args["VIBEY_GH_GID"]) == (uid, gid)


def test_downloads_nothing_but_packages(instructions: list[Any]) -> None:
    piped_to_shell = re.compile(r"\b(curl|wget)\b[^;&]*\|\s*(sudo\s+)?(ba|z|da)?sh\b")
    for item in of_command(instructions, "RUN"):
        script = " ".join(item.value)
        assert not piped_to_shell.search(script), item.original
        assert "://" not in script, item.original
    assert of_command(instructions, "ADD") == []


def test_installs_the_package_from_the_build_context(instructions: list[Any]) -> None:
    ignore = (DOCKERFILE.parent / "Dockerfile.dockerignore").read_text(encoding="utf-8")
    kept = {line[1:].rstrip("/") for line in ignore.splitlines() if line.startswith("!")}
    destinations = []
    for item in of_command(instructions, "COPY"):
        assert not any(flag.startswith("--from") for flag in item.flags), item.original
        *sources, destination = item.value
        for source in sources:
            assert (REPO / source).exists(), f"{source} is not in the build context"
            assert source.rstrip("/") in kept, f"{source} is excluded by Dockerfile.dockerignore"
        destinations.append(destination)
    assert "pyproject.toml" in " ".join(" ".join(i.value) for i in of_command(instructions, "COPY"))
    package_dir = "/src/vibey-gh"
    assert all(d.startswith(package_dir) for d in destinations)
    installs = [" ".join(i.value) for i in of_command(instructions, "RUN")]
    # the report's plots, but not the embedded runner: this image serves with Ollama
    assert any(
        f"pip install --no-cache-dir '{package_dir}[plots]'" in script for script in installs
    )
    assert not any("embedded" in script or "xllamacpp" in script for script in installs)


def test_command_is_usable_for_both_sides(instructions: list[Any]) -> None:
    (entrypoint,) = of_command(instructions, "ENTRYPOINT")
    (command,) = of_command(instructions, "CMD")
    # the base image's `ollama` entrypoint is cleared so `vibey-gh ...` can be the command
    assert entrypoint.json and entrypoint.value == ()
    assert command.json and command.value == ("ollama", "serve")
    env = dict(zip(*[iter(of_command(instructions, "ENV")[0].value)] * 2, strict=True))
    assert env["PATH"].split(":")[0] == "/opt/vibey-gh/venv/bin"
    assert env["VIBEY_GH_SLOTS_DIR"] == "/var/lib/vibey-gh/slots"
