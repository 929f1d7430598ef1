"""Runner adapters: embedded (xllamacpp), llama-server and Ollama, chosen in registry.py."""
