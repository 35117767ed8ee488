"""executorch.backends.xnnpack.partition.config."""
