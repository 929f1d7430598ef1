from __future__ import annotations

from tests.support.ports import free_port
from tests.support.runners import Recorded, recorded, serve_recorded
from vibey_gh.runners.llamacpp.api.watch import LlamaServerWatch, NoWatch
from vibey_gh.runners.ollama.watch import OllamaWatch


def test_ollama_with_a_model_loaded_is_busy() -> None:
    routes = {
        "/api/ps": recorded("ollama/era_c/ps_loaded.json"),
        "/api/version": recorded("ollama/era_c/version.json"),
    }
    with serve_recorded(routes) as production:
        state = OllamaWatch(production.url).poll()
    assert state.reachable and state.busy is True
    assert state.models == ("gpt-oss:20b",)
    assert state.version == "0.32.15"


def test_ollama_with_nothing_loaded_is_idle_then_busy_when_a_model_appears() -> None:
    routes = {
        "/api/ps": recorded("ollama/era_b/ps_idle.json"),
        "/api/version": recorded("ollama/era_b/version.json"),
    }
    with serve_recorded(routes) as production:
        watch = OllamaWatch(production.url + "/")
        idle = watch.poll()
        production.routes["/api/ps"] = recorded("ollama/era_b/ps_loaded.json")
        loaded = watch.poll()
    assert idle.reachable and idle.busy is False and idle.models == ()
    assert loaded.busy is True and loaded.models == ("llama3.2:3b",)


def test_ollama_era_a_ps_without_context_length_still_reads() -> None:
    routes = {
        "/api/ps": recorded("ollama/era_a/ps_loaded.json"),
        "/api/version": recorded("ollama/era_a/version.json"),
    }
    with serve_recorded(routes) as production:
        state = OllamaWatch(production.url).poll()
    assert state.busy is True and state.version == "0.9.6"


def test_ollama_ps_error_is_unknown_not_idle() -> None:
    routes = {
        "/api/ps": Recorded(500, {"error": "boom"}),
        "/api/version": recorded("ollama/era_b/version.json"),
    }
    with serve_recorded(routes) as production:
        state = OllamaWatch(production.url).poll()
    assert state.reachable and state.busy is None
    assert state.reason is not None and "answered 500" in state.reason


def test_unreachable_production_is_not_busy_and_says_why() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    for watch in (OllamaWatch(url), LlamaServerWatch(url)):
        state = watch.poll()
        assert state.reachable is False and state.busy is False
        assert state.reason is not None and state.reason.startswith(f"no answer from {url}")


def test_watch_timeouts_never_exceed_a_second() -> None:
    assert OllamaWatch("http://x:1", timeout_s=30).timeout_s == 1.0
    assert LlamaServerWatch("http://x:1", timeout_s=0.25).timeout_s == 0.25


def llama_routes(slots: str) -> dict[str, Recorded]:
    return {
        "/health": recorded("llama_server/health_ok.json"),
        "/slots": recorded(f"llama_server/{slots}.json"),
        "/v1/models": recorded("llama_server/models.json"),
    }


def test_llama_server_idle_lists_its_model() -> None:
    with serve_recorded(llama_routes("slots_idle")) as production:
        state = LlamaServerWatch(production.url).poll()
    assert state.reachable and state.busy is False
    assert state.models == ("/models/SmolLM2-135M-Instruct.Q4_1.gguf",)


def test_llama_server_processing_slot_is_busy() -> None:
    with serve_recorded(llama_routes("slots_busy")) as production:
        state = LlamaServerWatch(production.url).poll()
    assert state.busy is True


def test_llama_server_loading_is_busy() -> None:
    with serve_recorded({"/health": recorded("llama_server/loading.json")}) as production:
        state = LlamaServerWatch(production.url).poll()
    assert state.reachable and state.busy is True
    assert state.reason is not None and "loading" in state.reason


def test_llama_server_without_slots_endpoint_is_unknown() -> None:
    with serve_recorded(llama_routes("slots_disabled")) as production:
        state = LlamaServerWatch(production.url).poll()
    assert state.reachable and state.busy is None
    assert state.reason is not None and "--slots" in state.reason


def test_no_watch_is_never_busy() -> None:
    state = NoWatch().poll()
    assert state.busy is False and state.reason
