"""The fingerprint of design §5: what it hashes, that it is stable, and how changes read."""

from __future__ import annotations

import hashlib

from msgspec.structs import replace

from vibey_gh.files import canonical_json
from vibey_gh.interfaces.schema import as_json
from vibey_gh.interfaces.slots_interface import Accelerator, DeviceFacts, RunnerInfo
from vibey_gh.slots.evidence.fingerprint import (
    FINGERPRINT_FIELDS,
    compute_fingerprint,
    describe_differences,
    fingerprint_id,
)

GIB = 1 << 30
M5 = DeviceFacts(
    hardware_model="Mac17,2",
    processor="Apple M5",
    memory_bytes=24 * GIB,
    accelerators=(Accelerator("Apple M5 (10 GPU cores)", None, "integrated", 0),),
    os_name="macOS",
    os_version="26.6.2",
    sources={"processor": "sysctl machdep.cpu.brand_string"},
)
OLLAMA = RunnerInfo("ollama", "0.34.4", "gpt-oss:20b", "17052f91a42e")
GOLDEN_JSON = (
    '{"accelerators":[{"memory_bytes":null,"name":"Apple M5 (10 GPU cores)"}],'
    '"hardware_model":"Mac17,2","memory_bytes":25769803776,"model_digest":"17052f91a42e",'
    '"os_name":"macOS","os_version":"26.6.2","processor":"Apple M5","runner_kind":"ollama",'
    '"runner_version":"0.34.4","window":65536}'
)
GOLDEN_ID = "9a8a18b1da05b605"


def test_golden_id_is_stable_across_pythons_and_machines() -> None:
    fingerprint = compute_fingerprint(M5, OLLAMA, 65536)
    assert canonical_json(fingerprint.fields) == GOLDEN_JSON
    assert hashlib.sha256(GOLDEN_JSON.encode("utf-8")).hexdigest()[:16] == GOLDEN_ID
    assert fingerprint.id == GOLDEN_ID


def test_fields_are_exactly_the_design_list() -> None:
    fields = compute_fingerprint(M5, OLLAMA, 65536).fields
    assert tuple(fields) == FINGERPRINT_FIELDS
    assert set(FINGERPRINT_FIELDS) == {
        "hardware_model",
        "processor",
        "memory_bytes",
        "accelerators",
        "os_name",
        "os_version",
        "runner_kind",
        "runner_version",
        "model_digest",
        "window",
    }


def test_id_of_recorded_fields_matches_and_ignores_extra_keys() -> None:
    fingerprint = compute_fingerprint(M5, OLLAMA, 65536)
    assert fingerprint_id(fingerprint.fields | {"note": "not hashed"}) == GOLDEN_ID
    assert as_json(fingerprint) == {"id": GOLDEN_ID, "fields": fingerprint.fields}


def test_every_hashed_field_changes_the_id() -> None:
    base = compute_fingerprint(M5, OLLAMA, 65536).id
    variants = [
        compute_fingerprint(replace(M5, hardware_model="Mac17,3"), OLLAMA, 65536),
        compute_fingerprint(replace(M5, processor="Apple M5 Pro"), OLLAMA, 65536),
        compute_fingerprint(replace(M5, memory_bytes=32 * GIB), OLLAMA, 65536),
        compute_fingerprint(replace(M5, accelerators=()), OLLAMA, 65536),
        compute_fingerprint(replace(M5, os_name="Linux"), OLLAMA, 65536),
        compute_fingerprint(replace(M5, os_version="26.7"), OLLAMA, 65536),
        compute_fingerprint(M5, replace(OLLAMA, kind="llama-server"), 65536),
        compute_fingerprint(M5, replace(OLLAMA, version="0.34.2"), 65536),
        compute_fingerprint(M5, replace(OLLAMA, model_digest="3a1b2c3d4e5f"), 65536),
        compute_fingerprint(M5, OLLAMA, 32768),
    ]
    ids = {variant.id for variant in variants}
    assert base not in ids
    assert len(ids) == len(variants)


def test_what_is_not_the_device_does_not_change_the_id() -> None:
    base = compute_fingerprint(M5, OLLAMA, 65536).id
    noisy = replace(
        M5,
        memory_limit_bytes=8 * GIB,
        sources={"memory_bytes": "elsewhere"},
        missing={"hardware_model": "x"},
    )
    renamed = replace(OLLAMA, model="gpt-oss:20b-alias", missing={"version": "y"})
    assert compute_fingerprint(noisy, renamed, 65536).id == base


def test_accelerator_memory_is_part_of_the_id() -> None:
    gpu = replace(M5, accelerators=(Accelerator("NVIDIA L4", 24 * GIB),))
    bigger = replace(M5, accelerators=(Accelerator("NVIDIA L4", 48 * GIB),))
    assert compute_fingerprint(gpu, OLLAMA, 4096).id != compute_fingerprint(bigger, OLLAMA, 4096).id


def test_differences_read_as_phrases() -> None:
    old = compute_fingerprint(M5, replace(OLLAMA, version="0.34.2"), 32768).fields
    new_device = replace(M5, memory_bytes=32 * GIB, os_version="26.7")
    new_runner = replace(OLLAMA, model_digest="sha256:3a1b2c3d4e5f6a7b8c9d")
    new = compute_fingerprint(new_device, new_runner, 65536).fields
    assert describe_differences(old, new) == [
        "memory 24.0 GiB → 32.0 GiB",
        "os 26.6.2 → 26.7",
        "runner 0.34.2 → 0.34.4",
        "model digest 17052f91a42e → 3a1b2c3d4e5f",
        "window 32768 → 65536",
    ]


def test_identical_fields_have_no_differences() -> None:
    fields = compute_fingerprint(M5, OLLAMA, 65536).fields
    assert describe_differences(fields, dict(fields)) == []


def test_kind_and_name_changes_show_the_whole_identity() -> None:
    old = compute_fingerprint(M5, OLLAMA, 4096).fields
    linux = replace(M5, os_name="Ubuntu", os_version="26.04", hardware_model=None)
    new = compute_fingerprint(linux, RunnerInfo("llama-server", "b10488", "m", None), 4096).fields
    assert describe_differences(old, new) == [
        "hardware Mac17,2 → unknown",
        "os macOS 26.6.2 → Ubuntu 26.04",
        "runner ollama 0.34.4 → llama-server b10488",
        "model digest 17052f91a42e → unknown",
    ]


def test_accelerator_changes_are_named() -> None:
    old = compute_fingerprint(replace(M5, accelerators=()), OLLAMA, 4096).fields
    new = compute_fingerprint(
        replace(M5, accelerators=(Accelerator("NVIDIA H200", 141 * GIB),)), OLLAMA, 4096
    ).fields
    assert describe_differences(old, new) == ["accelerators none → NVIDIA H200 (141.0 GiB)"]


def test_fields_missing_from_an_old_record_count_as_unknown() -> None:
    new = compute_fingerprint(M5, OLLAMA, 4096).fields
    old = {k: v for k, v in new.items() if k != "runner_version"}
    assert describe_differences(old, new) == ["runner unknown → 0.34.4"]


def test_production_settings_change_the_id_and_say_which_setting_changed() -> None:
    plain = compute_fingerprint(M5, OLLAMA, 65536)
    tuned = replace(OLLAMA, settings={"OLLAMA_KV_CACHE_TYPE": "q8_0"})
    with_cache = compute_fingerprint(M5, tuned, 65536)
    flash = replace(tuned, settings={"OLLAMA_KV_CACHE_TYPE": "q8_0", "OLLAMA_FLASH_ATTENTION": "1"})
    with_flash = compute_fingerprint(M5, flash, 65536)
    assert len({plain.id, with_cache.id, with_flash.id}) == 3
    assert plain.id == GOLDEN_ID  # no settings: the id evidence recorded before settings had
    assert with_cache.fields["runner_settings"] == {"OLLAMA_KV_CACHE_TYPE": "q8_0"}
    assert fingerprint_id(with_flash.fields) == with_flash.id
    assert describe_differences(with_cache.fields, with_flash.fields) == [
        "runner setting OLLAMA_FLASH_ATTENTION unset → 1"
    ]
    assert describe_differences(with_cache.fields, plain.fields) == [
        "runner setting OLLAMA_KV_CACHE_TYPE q8_0 → unset"
    ]


def test_a_version_that_starts_with_its_runners_name_is_not_named_twice() -> None:
    old = {"runner_kind": "simulated", "runner_version": "simulated 0.1.0"}
    new = {"runner_kind": "embedded", "runner_version": "xllamacpp 2026.10.11549"}
    assert describe_differences(old, new) == [
        "runner simulated 0.1.0 → embedded xllamacpp 2026.10.11549"
    ]
