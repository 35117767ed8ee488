"""executorch.extension.pybindings (upstream path)."""
