"""Example waza plugins, one of each kind; see docs/plugins.md."""
