"""vibey-gh slots: measure how many agent runs a machine may serve at once on a local model."""

__version__ = "0.1.0"
