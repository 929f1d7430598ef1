"""The registry is the one place that maps a runner kind's name to its kind: it refuses other
names with the project's error, and nothing outside `runners/` compares a kind with a name."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

import vibey_gh
from vibey_gh.config import LocalModels
from vibey_gh.errors import BadInput
from vibey_gh.runners.llamacpp.api.watch import LlamaServerWatch
from vibey_gh.runners.llamacpp.embedded import EmbeddedRunner
from vibey_gh.runners.llamacpp.llama_server import LlamaServerRunner
from vibey_gh.runners.ollama.runner import OllamaRunner
from vibey_gh.runners.ollama.watch import OllamaWatch
from vibey_gh.runners.registry import (
    RUNNER_NAMES,
    check_kind,
    identify_production,
    production_watch,
    registered_names,
    runner_for,
    runner_kind,
    watch_url,
)

PACKAGE = Path(vibey_gh.__file__).resolve().parent
# names that hold a runner kind wherever they appear
KIND_HOLDERS = {"runner", "runner_kind", "runner_name"}


def test_runner_for_each_kind() -> None:
    assert isinstance(runner_for("embedded"), EmbeddedRunner)
    assert isinstance(runner_for("llama-server"), LlamaServerRunner)
    assert isinstance(runner_for("ollama"), OllamaRunner)
    assert [runner_for(k).kind for k in RUNNER_NAMES] == list(RUNNER_NAMES)


def test_unknown_kind_lists_the_valid_names() -> None:
    with pytest.raises(BadInput, match="valid runners: embedded, llama-server, ollama"):
        runner_for("vllm")


@pytest.mark.parametrize(
    "ask",
    [
        lambda: runner_kind("vllm"),
        lambda: check_kind("vllm"),
        lambda: watch_url("vllm", "http://127.0.0.1:1"),
        lambda: identify_production(LocalModels(runner="vllm")),
        lambda: runner_kind("Embedded"),
        lambda: runner_kind(""),
    ],
)
def test_every_question_by_an_unknown_name_is_bad_input(ask: object) -> None:
    with pytest.raises(BadInput) as refused:
        ask()  # type: ignore[operator]
    assert str(refused.value).endswith("valid runners: embedded, llama-server, ollama, simulated")
    assert "\n" not in str(refused.value)


def _literals(node: ast.expr) -> Iterator[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        yield node.value
    elif isinstance(node, ast.Tuple | ast.List | ast.Set):
        for element in node.elts:
            yield from _literals(element)


def _holds_a_kind(node: ast.expr) -> bool:
    if isinstance(node, ast.Attribute):
        return node.attr in KIND_HOLDERS
    return isinstance(node, ast.Name) and node.id in KIND_HOLDERS


def kind_comparisons(source: str, path: Path) -> list[str]:
    """`file:line` of each comparison of a runner kind with a string literal: a kind's name
    compared with anything, or a kind-holding name (`config.runner`, `runner_kind`) compared
    with any string literal, `in` a literal tuple, list or set included."""
    found = []
    for node in ast.walk(ast.parse(source, filename=str(path))):
        if not isinstance(node, ast.Compare):
            continue
        operands = [node.left, *node.comparators]
        literals = [text for operand in operands for text in _literals(operand)]
        names_a_kind = any(text in RUNNER_NAMES for text in literals)
        if names_a_kind or (literals and any(_holds_a_kind(o) for o in operands)):
            found.append(f"{path}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_the_scan_finds_each_way_of_comparing_a_kind() -> None:
    source = (
        'if config.runner == "ollama": pass\n'
        'if req.config.runner in ("embedded", "simulated"): pass\n'
        'if "llama-server" != kind: pass\n'
        'if runner_kind == "vllm": pass\n'
        'if event.kind == "slots": pass\n'
        "if config.runner == other.runner: pass\n"
    )
    found = kind_comparisons(source, Path("example.py"))
    assert [line.split(":")[1] for line in found] == ["1", "2", "3", "4"]


def test_nothing_outside_runners_compares_a_kind_with_a_name() -> None:
    offenders = [
        line
        for path in sorted(PACKAGE.rglob("*.py"))
        if "runners" not in path.relative_to(PACKAGE).parts
        for line in kind_comparisons(path.read_text(encoding="utf-8"), path)
    ]
    assert offenders == [], "ask the runner kind (runners/registry.py) instead:\n" + "\n".join(
        offenders
    )


def test_production_watch_follows_the_runner_kind() -> None:
    ollama = production_watch(LocalModels(runner="ollama"))
    assert isinstance(ollama, OllamaWatch) and ollama.base_url == "http://127.0.0.1:11434"
    llama = production_watch(LocalModels(runner="llama-server", production_url="http://h:9000"))
    assert isinstance(llama, LlamaServerWatch) and llama.base_url == "http://h:9000"
    assert isinstance(production_watch(LocalModels(runner="embedded")), LlamaServerWatch)


def test_the_registry_holds_exactly_the_names_the_config_accepts() -> None:
    assert registered_names() == RUNNER_NAMES
    assert [runner_kind(name).name for name in RUNNER_NAMES] == list(RUNNER_NAMES)
