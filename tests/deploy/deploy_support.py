"""What the deployment tests share: where things are, and a real helm to render with."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[2]
CHART = REPO / "deploy" / "helm" / "vibey-gh"
CHART_SCRIPTS = CHART / "files"
HELM = REPO / "tools" / "bin" / "helm"
INSTALL_HELM = REPO / "tools" / "install-helm.sh"
DOCKERFILE = REPO / "deploy" / "docker" / "Dockerfile"


class Helm:
    """The helm binary from tools/install-helm.sh, kept away from the user's helm folders."""

    def __init__(self, binary: Path, home: Path) -> None:
        self.binary = binary
        self.env = {
            "PATH": "/usr/bin:/bin",
            "HOME": str(home),
            "HELM_CACHE_HOME": str(home / "cache"),
            "HELM_CONFIG_HOME": str(home / "config"),
            "HELM_DATA_HOME": str(home / "data"),
        }
        self.values_dir = home / "values"
        self.values_dir.mkdir(parents=True, exist_ok=True)
        self._rendered: dict[str, list[dict[str, Any]]] = {}

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.binary), *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    def values_file(self, name: str, values: Mapping[str, Any]) -> Path:
        path = self.values_dir / f"{name}.yaml"
        path.write_text(yaml.safe_dump(dict(values)), encoding="utf-8")
        return path

    def lint(self, name: str, values: Mapping[str, Any]) -> subprocess.CompletedProcess[str]:
        return self.run("lint", "--strict", str(CHART), "-f", str(self.values_file(name, values)))

    def template(self, name: str, values: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The manifests rendered for one values set (rendered once per test run)."""
        if name not in self._rendered:
            result = self.run(
                "template",
                "release",
                str(CHART),
                "--namespace",
                "models",
                "-f",
                str(self.values_file(name, values)),
            )
            assert result.returncode == 0, result.stderr
            docs = [doc for doc in yaml.safe_load_all(result.stdout) if doc]
            self._rendered[name] = docs
        return self._rendered[name]


def of_kind(docs: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [doc for doc in docs if doc.get("kind") == kind]


def pod_specs(docs: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """(kind/name, pod spec) for every workload that makes pods."""
    found: list[tuple[str, dict[str, Any]]] = []
    for doc in docs:
        kind, name = doc["kind"], doc["metadata"]["name"]
        if kind in ("DaemonSet", "Deployment", "StatefulSet", "Job"):
            found.append((f"{kind}/{name}", doc["spec"]["template"]["spec"]))
        elif kind == "CronJob":
            found.append((f"{kind}/{name}", doc["spec"]["jobTemplate"]["spec"]["template"]["spec"]))
    return found


def containers_of(spec: dict[str, Any]) -> list[dict[str, Any]]:
    return [*spec.get("initContainers", []), *spec["containers"]]


def env_of(container: dict[str, Any]) -> dict[str, str | None]:
    return {item["name"]: item.get("value") for item in container.get("env", [])}


def mounts_of(container: dict[str, Any]) -> dict[str, str]:
    """mount path → volume name"""
    return {m["mountPath"]: m["name"] for m in container.get("volumeMounts", [])}
