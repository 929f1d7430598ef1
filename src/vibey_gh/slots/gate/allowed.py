"""`slots allowed`: how many runs may start now, and why (design §5 "Allowed").

On an OS the tool does not run on (anything but macOS and Linux) the answer is 1, naming the
supported platforms. Declaration 1 answers 1 without probing anything. Otherwise today's
fingerprint is computed; missing or stale evidence answers 1, says what differs from the
nearest evidence on this device, and writes a calibration request. With evidence, every
recorded step is re-judged against today's bounds, from the evidence's figures (see `figures`:
kept in the cache and made again from the evidence whenever it changed, so a large evidence
file is not parsed on every call). Every failure on the way (production not answering, a
corrupt evidence file, a config that does not parse) answers 1 with that failure as the
reason: a gate fails safe. Every answer carries a `reason_code` from `REASON_CODES`, for
scripts that branch on it.
"""

from __future__ import annotations

from collections.abc import Callable

from msgspec.structs import replace

from ...config import LocalModels, load_config
from ...errors import ConfigError, VibeyError
from ...platforms.support import unsupported_platform_reason
from .answer import ALLOWED_SCHEMA as ALLOWED_SCHEMA
from .answer import REASON_CODES as REASON_CODES
from .answer import AllowedAnswer as AllowedAnswer
from .answer import AllowedDeps as AllowedDeps


def decide_allowed(
    config: LocalModels | None = None,
    *,
    model: str | None = None,
    window: int | None = None,
    deps: AllowedDeps | Callable[[], AllowedDeps],
    platform: str | None = None,
) -> AllowedAnswer:
    """The answer for `config` on `platform` (default: this machine's). `deps` may be a
    function that builds them: it is called only once the answer needs the world."""
    if config is None:
        try:
            config = load_config()
        except ConfigError as exc:
            reason = f"config error: {exc} (1 until the config is fixed)"
            return AllowedAnswer(1, reason, None, None, False, None, reason_code="config_error")
    config = config.with_overrides(model=model, window=window)
    declaration = config.concurrent_runs
    unsupported = unsupported_platform_reason(platform)
    if unsupported is not None:
        # No probe, lock or runner of ours works here: one is the only safe answer, and a
        # fingerprint of unknowns would only hide why.
        return AllowedAnswer(
            1, unsupported, None, None, False, declaration, reason_code="unsupported_platform"
        )
    if declaration == 1:
        return AllowedAnswer(1, "declared 1 (concurrent_runs = 1)", None, None, False, 1)
    deps = deps if isinstance(deps, AllowedDeps) else deps()
    try:
        identity = deps.identify(config)
    except VibeyError as exc:
        return AllowedAnswer(
            1,
            f"production runner: {exc}",
            None,
            None,
            False,
            declaration,
            reason_code="production_unreachable",
        )
    # lazy: evidence, fingerprint and judge are tens of ms a declared 1 answers without, and
    # every storm pass asks
    from .measured import answer_from_evidence

    return _with_production_slots(
        answer_from_evidence(config, deps, identity, declaration), identity.serving_slots
    )


def _with_production_slots(answer: AllowedAnswer, serving: int | None) -> AllowedAnswer:
    """The answer with what production serves now; the reason says when that is fewer."""
    if serving is None:
        if answer.allowed <= 1:
            return answer
        # a storm would start that many lanes on a production that may serve one at a time
        return replace(
            answer,
            reason=f"{answer.reason}; production's parallelism is unknown: make sure it "
            f"serves {answer.allowed} slots (`vibey-gh slots apply` shows how)",
        )
    if answer.allowed <= serving:
        return replace(answer, production_slots=serving)
    reason = (
        f"{answer.reason}; but production serves only {serving} slot(s) now: "
        f"`vibey-gh slots apply` gives it {answer.allowed}"
    )
    return replace(answer, production_slots=serving, reason=reason)


__all__ = ["ALLOWED_SCHEMA", "REASON_CODES", "AllowedAnswer", "AllowedDeps", "decide_allowed"]
