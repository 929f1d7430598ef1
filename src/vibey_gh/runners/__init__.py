"""Runner kinds (embedded, llama-server, Ollama, simulated): each one `contract.RunnerKind`
(`kinds`), named by `registry`; the adapters that start and speak to them beside."""
