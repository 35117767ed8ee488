"""executorch.backends.xnnpack.partition (upstream path)."""
