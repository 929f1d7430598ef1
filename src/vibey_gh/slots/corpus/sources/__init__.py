"""Where recorded turns come from, beside the lane specs.

Modules: `think_time` (each turn's tool time, from lane records and transcripts), `recorded`
(runs from traces and session logs), `traces` and `block_text` (kv-cache-tester traces and
their stand-in text), `sessions`, `session_builder`, `codex_rollout`, `claude_session` (agents'
session logs), `json_lines` (JSON Lines read a record at a time).
"""
