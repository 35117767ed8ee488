"""executorch.backends.xnnpack.partition."""
