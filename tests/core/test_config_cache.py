"""The config's parsed TOML is kept by the digest of the file's bytes, sealed, checked as a
fresh parse, and never trusted beyond what the config file itself says."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from vibey_gh.config import load_config
from vibey_gh.config_cache import SEAL_KEY, cache_file_for
from vibey_gh.errors import ConfigError
from vibey_gh.files import canonical_json, sha256_hex

CONFIG = (
    "[local_models]\nconcurrent_runs = 3\nwindow = 8192\n[local_models.bounds]\nmin_gain = 0.2\n"
)


def setup(tmp_path: Path, text: str = CONFIG, *, cache_dir: bool = True) -> dict[str, str]:
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "vibey-gh.toml").write_text(text)
    if cache_dir:
        (tmp_path / "state" / "cache").mkdir(parents=True)
    return {"VIBEY_GH_SLOTS_DIR": str(tmp_path / "state")}


def cache_file(tmp_path: Path) -> Path:
    config = tmp_path / "work" / "vibey-gh.toml"
    return cache_file_for(config, {"VIBEY_GH_SLOTS_DIR": str(tmp_path / "state")})


def edit_cache(tmp_path: Path, change: object, *, reseal: bool = False) -> None:
    """Change the kept parse as a hand edit would; `reseal` also recomputes its seal (what a
    careless edit does not do)."""
    kept = json.loads(cache_file(tmp_path).read_text())
    kept["toml"]["local_models"].update(change)
    if reseal:
        body = {name: value for name, value in kept.items() if name != SEAL_KEY}
        kept[SEAL_KEY] = sha256_hex(canonical_json(body).encode())
    cache_file(tmp_path).write_text(json.dumps(kept))


def test_the_parse_is_kept_keyed_to_the_files_bytes_and_sealed(tmp_path: Path) -> None:
    env = setup(tmp_path)
    first = load_config(tmp_path / "work", env)
    kept = json.loads(cache_file(tmp_path).read_text())
    assert kept["toml"]["local_models"]["window"] == 8192
    config_bytes = (tmp_path / "work" / "vibey-gh.toml").read_bytes()
    assert kept["config_sha256"] == hashlib.sha256(config_bytes).hexdigest()
    edit_cache(tmp_path, {"window": 16384}, reseal=True)  # read from the cache: the edit shows
    assert load_config(tmp_path / "work", env).window == 16384
    assert first.window == 8192 and first.bounds.min_gain == 0.2


def test_an_edited_cache_never_outvotes_the_config_file(tmp_path: Path) -> None:
    env = setup(tmp_path, '[local_models]\nconcurrent_runs = "measured"\n')
    assert load_config(tmp_path / "work", env).concurrent_runs == "measured"
    edit_cache(tmp_path, {"concurrent_runs": 5, "bounds": {"min_gain": 0.0}})
    again = load_config(tmp_path / "work", env)
    assert again.concurrent_runs == "measured" and again.bounds.min_gain == 0.1
    # and the cache was parsed past and rewritten from the file
    assert json.loads(cache_file(tmp_path).read_text())["toml"]["local_models"] == {
        "concurrent_runs": "measured"
    }


def test_a_kept_parse_is_checked_as_a_fresh_one(tmp_path: Path) -> None:
    env = setup(tmp_path)
    load_config(tmp_path / "work", env)
    edit_cache(tmp_path, {"concurrent_runs": "many"}, reseal=True)
    with pytest.raises(ConfigError, match="concurrent_runs"):
        load_config(tmp_path / "work", env)


def test_another_text_is_parsed_afresh_and_replaces_the_cache(tmp_path: Path) -> None:
    env = setup(tmp_path)
    load_config(tmp_path / "work", env)
    (tmp_path / "work" / "vibey-gh.toml").write_text(CONFIG.replace("8192", "2048"))
    assert load_config(tmp_path / "work", env).window == 2048
    assert json.loads(cache_file(tmp_path).read_text())["toml"]["local_models"]["window"] == 2048


@pytest.mark.parametrize(
    "damage",
    [
        "not json",
        '{"schema": 2, "config_sha256": "x", "toml": []}',
        "[" * 10_000 + "]" * 10_000,
        '{"schema": 99}',
        "",
    ],
)
def test_a_damaged_cache_is_parsed_past_and_rewritten(tmp_path: Path, damage: str) -> None:
    env = setup(tmp_path)
    cache_file(tmp_path).parent.mkdir()
    cache_file(tmp_path).write_text(damage)
    assert load_config(tmp_path / "work", env).window == 8192
    assert json.loads(cache_file(tmp_path).read_text())["toml"]["local_models"]["window"] == 8192


def test_a_cache_holding_other_types_under_the_right_digest_is_not_read(tmp_path: Path) -> None:
    env = setup(tmp_path)
    load_config(tmp_path / "work", env)
    kept = json.loads(cache_file(tmp_path).read_text())
    kept["toml"]["local_models"]["window"] = None  # JSON can say null; TOML cannot
    cache_file(tmp_path).write_text(json.dumps(kept))
    assert load_config(tmp_path / "work", env).window == 8192


def test_no_state_folder_is_created_for_it(tmp_path: Path) -> None:
    env = setup(tmp_path, cache_dir=False)
    assert load_config(tmp_path / "work", env).concurrent_runs == 3
    assert not (tmp_path / "state").exists()


def test_toml_dates_are_parsed_every_time_never_kept(tmp_path: Path) -> None:
    env = setup(tmp_path, CONFIG + "when = 2026-01-01\n")
    with pytest.raises(ConfigError, match="when"):
        load_config(tmp_path / "work", env)
    assert not cache_file(tmp_path).exists()


def test_a_syntax_error_is_one_config_error(tmp_path: Path) -> None:
    env = setup(tmp_path, "[local_models\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(tmp_path / "work", env)


def test_a_kept_parse_does_not_load_the_toml_parser(tmp_path: Path) -> None:
    env = setup(tmp_path)
    load_config(tmp_path / "work", env)
    script = (
        "import sys\n"
        "from vibey_gh.config import load_config\n"
        f"print(load_config(None, {env!r}).window)\n"
        "print('tomllib' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_path / "work",
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert done.stdout.split() == ["8192", "False"]


def test_two_configs_read_in_turn_each_keep_their_parse(tmp_path: Path) -> None:
    env = setup(tmp_path)
    user = tmp_path / "xdg"
    (user / "vibey-gh").mkdir(parents=True)
    (user / "vibey-gh" / "vibey-gh.toml").write_text("[local_models]\nwindow = 2048\n")
    elsewhere = {**env, "XDG_CONFIG_HOME": str(user)}
    assert load_config(tmp_path / "work", elsewhere).window == 8192
    assert load_config(tmp_path, elsewhere).window == 2048  # no ./vibey-gh.toml there
    kept = sorted(cache_file(tmp_path).parent.iterdir())
    assert len(kept) == 2
    edit_cache(tmp_path, {"window": 16384}, reseal=True)
    assert load_config(tmp_path / "work", elsewhere).window == 16384, "still the kept parse"


@pytest.mark.parametrize("kind", ["FIFO", "folder"])
def test_something_else_in_the_caches_place_is_skipped_with_a_warning(
    tmp_path: Path, kind: str, capsys: pytest.CaptureFixture[str]
) -> None:
    env = setup(tmp_path)
    cache_file(tmp_path).parent.mkdir()
    if kind == "FIFO":
        os.mkfifo(cache_file(tmp_path))
    else:
        cache_file(tmp_path).mkdir()
    assert load_config(tmp_path / "work", env).window == 8192
    warnings = capsys.readouterr().err.splitlines()
    said = "FIFO" if kind == "FIFO" else "folder"
    assert warnings[0].startswith(f"warning: cache {cache_file(tmp_path)} is a {said}")
    assert all(line.endswith("; skipped") for line in warnings)
