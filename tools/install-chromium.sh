#!/usr/bin/env bash
# Installs Debian's chromium for the HTML report's browser test (tests/slots/report/documents/test_html_report.py).
#
# Idempotent: when chromium is on PATH, nothing is done. It installs only where it can do so
# without asking (root, apt-get present); elsewhere it says so and exits 0, and the browser test
# is skipped with its reason.
set -euo pipefail

say() {
    printf 'install-chromium: %s\n' "$*" >&2
}

if command -v chromium >/dev/null 2>&1; then
    say "chromium is already installed ($(command -v chromium))"
    exit 0
fi
if [[ "$(id -u)" != "0" ]] || ! command -v apt-get >/dev/null 2>&1; then
    say "not root with apt-get: install Debian's chromium yourself, or the browser test is skipped"
    exit 0
fi

# apt's sandbox user must be able to write its temporary files: use a world-writable folder of
# our own under /var/tmp, whatever the caller's TMPDIR is.
apt_tmp="$(mktemp -d -p /var/tmp)"
chmod 1777 "$apt_tmp"
trap 'rm -rf "$apt_tmp"' EXIT
export TMPDIR="$apt_tmp" DEBIAN_FRONTEND=noninteractive

say "installing Debian's chromium (once per machine)"
if ! { apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium; } >"$apt_tmp/apt.log" 2>&1; then
    tail -5 "$apt_tmp/apt.log" >&2
    say "apt-get could not install chromium: the browser test is skipped"
    exit 0
fi
say "installed $(chromium --version 2>/dev/null || echo chromium)"
