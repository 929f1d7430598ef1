"""The helm fixture: the real binary from tools/install-helm.sh, or a skip that says why."""

from __future__ import annotations

import pytest
from deploy_support import HELM, REPO, Helm


@pytest.fixture(scope="session")
def helm(tmp_path_factory: pytest.TempPathFactory) -> Helm:
    if not (HELM.is_file() and HELM.stat().st_mode & 0o111):
        pytest.skip(f"{HELM.relative_to(REPO)} is absent: run tools/install-helm.sh to install it")
    return Helm(HELM, tmp_path_factory.mktemp("helm-home"))
