"""The evidence file's schema version, kind and integrity key: what `store` needs to find and
check a file without loading the typed document (`slots allowed` reads these on every call)."""

from __future__ import annotations

EVIDENCE_SCHEMA = 1
EVIDENCE_KIND = "vibey-gh-evidence"
INTEGRITY_KEY = "integrity"
