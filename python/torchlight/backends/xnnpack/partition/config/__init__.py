"""executorch.backends.xnnpack.partition.config (upstream path)."""
