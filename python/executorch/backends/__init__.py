"""executorch.backends: upstream delegate module paths."""
