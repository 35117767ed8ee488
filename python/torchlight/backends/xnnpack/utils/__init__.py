"""executorch.backends.xnnpack.utils (upstream path)."""
