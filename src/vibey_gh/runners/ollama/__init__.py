"""The Ollama kind: a calibration `ollama serve` beside production, Ollama's /api/chat, its
environment as its settings."""
