"""The simulated kind: llama-server's HTTP API over a capacity model, served by this package."""
