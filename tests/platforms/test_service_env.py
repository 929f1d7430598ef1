"""Production Ollama's environment as the app (launchctl) and the unit (systemd) hold it."""

from __future__ import annotations

from collections.abc import Callable

from vibey_gh.platforms.process.commands import CannedCommandRunner
from vibey_gh.platforms.service_env import (
    parse_systemd_environment,
    service_environment,
)

# the systemd unit of the Ollama service (the Ollama kind names it)
UNIT = "ollama"

NAMES = ("OLLAMA_NUM_PARALLEL", "OLLAMA_KV_CACHE_TYPE", "OLLAMA_FLASH_ATTENTION")
SYSTEMCTL = ("systemctl", "show", "ollama", "-p", "Environment")


def test_the_units_environment_is_split_as_systemd_quotes_it(
    fixture: Callable[[str], str],
) -> None:
    values = parse_systemd_environment(fixture("linux_systemctl_show_ollama_environment.txt"))
    assert values["OLLAMA_ORIGINS"] == "app://one app://two"
    assert values["OLLAMA_HOST"] == "0.0.0.0:11434"
    assert values["PATH"].startswith("/usr/local/sbin:")


def test_linux_reads_only_the_named_variables_from_the_unit(
    fixture: Callable[[str], str],
) -> None:
    run = CannedCommandRunner(
        {SYSTEMCTL: (0, fixture("linux_systemctl_show_ollama_environment.txt"))}
    )
    found = service_environment("linux", run, NAMES, UNIT)
    assert found.values == {
        "OLLAMA_NUM_PARALLEL": "4",
        "OLLAMA_FLASH_ATTENTION": "1",
        "OLLAMA_KV_CACHE_TYPE": "q8_0",
    }
    assert found.source == "systemctl show ollama -p Environment" and found.missing is None
    assert run.calls == [SYSTEMCTL]


def test_a_unit_without_environment_is_read_as_nothing_set(fixture: Callable[[str], str]) -> None:
    run = CannedCommandRunner(
        {SYSTEMCTL: (0, fixture("linux_systemctl_show_ollama_environment_empty.txt"))}
    )
    found = service_environment("linux", run, NAMES, UNIT)
    assert found.values == {} and found.missing is None


def test_no_systemd_is_a_missing_reading_with_its_reason() -> None:
    found = service_environment("linux", CannedCommandRunner({SYSTEMCTL: (1, "")}), NAMES, UNIT)
    assert found.values == {}
    assert found.missing == "`systemctl show ollama -p Environment` exited 1"


def test_macos_asks_launchctl_for_each_variable(fixture: Callable[[str], str]) -> None:
    run = CannedCommandRunner(
        {
            ("launchctl", "getenv", "OLLAMA_NUM_PARALLEL"): (
                0,
                fixture("macos_launchctl_getenv_num_parallel.txt"),
            ),
            ("launchctl", "getenv", "OLLAMA_KV_CACHE_TYPE"): (
                0,
                fixture("macos_launchctl_getenv_kv_cache_type.txt"),
            ),
            ("launchctl", "getenv", "OLLAMA_FLASH_ATTENTION"): (0, ""),
        }
    )
    found = service_environment("darwin", run, NAMES, UNIT)
    assert found.values == {"OLLAMA_NUM_PARALLEL": "2", "OLLAMA_KV_CACHE_TYPE": "q8_0"}
    assert found.source == "launchctl getenv" and found.missing is None
    assert [call[2] for call in run.calls] == list(NAMES)


def test_no_launchctl_and_other_platforms_say_why() -> None:
    assert service_environment("darwin", CannedCommandRunner(), NAMES, UNIT).missing == (
        "launchctl not found"
    )
    assert service_environment("win32", CannedCommandRunner(), NAMES, UNIT).missing == (
        "unsupported platform: win32"
    )
