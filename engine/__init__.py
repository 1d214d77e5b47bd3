"""Continuo's agent runtime (being built; the curated public API lands with the agent)."""
