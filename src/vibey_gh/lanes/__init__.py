"""Lanes: one agent run each — a plan, then read-only tool calls, then an answer."""
