"""codeagent: a terminal coding agent with a structure- and lifecycle-aware KV cache."""

__version__ = "0.1.0"
